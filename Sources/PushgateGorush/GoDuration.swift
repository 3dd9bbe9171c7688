/// A duration in firebase-admin-go's text form, `<seconds>[.<nanoseconds>]s` (firebase-admin-go v4.19.0
/// `messaging/messaging.go` `stringToDuration` and `durationToString`), read and written back as it
/// does, quirks included: the part after the point is a count of nanoseconds with its leading zeros
/// dropped (so `3.5s` is read as 3 s and 5 ns and written back `3.000000005s`, and `3.0s` cannot be
/// read), and the total wraps around as Go's `int64` does.
enum GoDuration {
    /// The nanoseconds of `text`; nil when firebase-admin-go cannot read it.
    static func parse(_ text: String) -> Int64? {
        let body = text.hasSuffix("s") ? text.dropLast() : Substring(text)
        let segments = body.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 1 || segments.count == 2, let seconds = Self.goInteger(segments[0]) else { return nil }
        var total = seconds &* 1_000_000_000
        if segments.count == 2 {
            guard let nanoseconds = Self.goInteger(segments[1].drop { $0 == "0" }) else { return nil }
            total = total &+ nanoseconds
        }
        return total
    }

    /// `nanoseconds` as firebase-admin-go writes a duration: whole seconds (truncated towards zero), and
    /// nine digits of nanoseconds when those are positive.
    static func text(_ nanoseconds: Int64) -> String {
        let seconds = nanoseconds / 1_000_000_000
        let rest = nanoseconds - seconds * 1_000_000_000
        guard rest > 0 else { return "\(seconds)s" }
        let digits = String(rest)
        return "\(seconds).\(String(repeating: "0", count: 9 - digits.count))\(digits)s"
    }

    /// Go's `strconv.ParseInt(text, 10, 64)`: an optional sign and decimal digits, within `Int64`.
    private static func goInteger(_ text: Substring) -> Int64? {
        let digits = text.first == "+" || text.first == "-" ? text.dropFirst() : text
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }
}
