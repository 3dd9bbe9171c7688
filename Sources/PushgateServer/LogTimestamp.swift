#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// The time of a log line in UTC, as ISO 8601 with milliseconds (`2026-11-28T16:10:05.123Z`), the form
/// Foundation's `ISO8601FormatStyle(includingFractionalSeconds: true)` gives, at a fraction of its cost:
/// the calendar fields are worked out once a second.
enum LogTimestamp {
    /// The text of the current second, up to and without its fraction.
    private static let cache = Mutex<(second: Int, text: [UInt8])>((-1, []))

    /// Appends the current time to `bytes`.
    static func append(to bytes: inout [UInt8]) {
        let now = Date().timeIntervalSince1970
        let seconds = now.rounded(.down)
        Self.append(seconds: Int(seconds), milliseconds: min(999, Int((now - seconds) * 1000)), to: &bytes)
    }

    /// Appends the time `seconds` (since 1970, UTC) and `milliseconds` to `bytes`.
    static func append(seconds: Int, milliseconds: Int, to bytes: inout [UInt8]) {
        let prefix = Self.cache.withLock { cache -> [UInt8] in
            if cache.second != seconds { cache = (seconds, Self.secondText(seconds)) }
            return cache.text
        }
        bytes.append(contentsOf: prefix)
        bytes.append(UInt8(ascii: "."))
        Self.appendDigits(milliseconds, count: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `YYYY-MM-DDTHH:MM:SS` of `seconds` since 1970, UTC.
    private static func secondText(_ seconds: Int) -> [UInt8] {
        var time = time_t(seconds)
        var fields = tm()
        gmtime_r(&time, &fields)
        var text: [UInt8] = []
        text.reserveCapacity(19)
        Self.appendDigits(Int(fields.tm_year) + 1900, count: 4, to: &text)
        text.append(UInt8(ascii: "-"))
        Self.appendDigits(Int(fields.tm_mon) + 1, count: 2, to: &text)
        text.append(UInt8(ascii: "-"))
        Self.appendDigits(Int(fields.tm_mday), count: 2, to: &text)
        text.append(UInt8(ascii: "T"))
        Self.appendDigits(Int(fields.tm_hour), count: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        Self.appendDigits(Int(fields.tm_min), count: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        Self.appendDigits(Int(fields.tm_sec), count: 2, to: &text)
        return text
    }

    /// Appends `value` as exactly `count` decimal digits (zero-padded; `value` fits).
    private static func appendDigits(_ value: Int, count: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
