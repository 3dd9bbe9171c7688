import PushgateCore

/// The time of a log line in UTC, as ISO 8601 with milliseconds (`2026-11-28T16:10:05.123Z`), the form
/// Foundation's `ISO8601FormatStyle(includingFractionalSeconds: true)` gives, at a fraction of its cost:
/// the calendar fields are worked out once a second.
enum LogTimestamp {
    /// The text of the current second, up to and without its fraction.
    private static let seconds = OncePerSecond<[UInt8]>(LogTimestamp.secondText)

    /// Appends the current time to `bytes`.
    static func append(to bytes: inout [UInt8]) {
        let now = UTCTime.now()
        Self.append(seconds: Int(now.second), milliseconds: now.milliseconds, to: &bytes)
    }

    /// Appends the time `seconds` (since 1970, UTC) and `milliseconds` to `bytes`.
    static func append(seconds: Int, milliseconds: Int, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: Self.seconds.text(for: Int64(seconds)))
        bytes.append(UInt8(ascii: "."))
        Self.appendDigits(Int64(milliseconds), count: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `YYYY-MM-DDTHH:MM:SS` of `seconds` since 1970, UTC.
    @Sendable private static func secondText(_ seconds: Int64) -> [UInt8] {
        let time = UTCTime(secondsSince1970: seconds)
        var text: [UInt8] = []
        text.reserveCapacity(19)
        for (value, count, separator) in [
            (time.year, 4, "-"), (time.month, 2, "-"), (time.day, 2, "T"), (time.hour, 2, ":"), (time.minute, 2, ":"),
            (time.second, 2, ""),
        ] as [(Int64, Int, StaticString)] {
            Self.appendDigits(value, count: count, to: &text)
            separator.withUTF8Buffer { text.append(contentsOf: $0) }
        }
        return text
    }

    /// Appends `value` as exactly `count` decimal digits (zero-padded; `value` fits).
    private static func appendDigits(_ value: Int64, count: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
