public import Foundation
import PushgateCore

/// Reads an HTTP `Retry-After` header: delay-seconds or an HTTP date.
public enum RetryAfter {
    /// The longest delay a header may ask for: a day, the outbox's default maximum age. A server's larger
    /// figure (up to the 19 digits an `Int` holds, or a date centuries away) is taken as this, so that no
    /// date or millisecond count computed from it can overflow.
    public static let maximum = Duration.seconds(86_400)

    /// The delay the header asks for, from `now`, at most ``maximum``; nil when absent or unreadable. Dates
    /// in the past give 0.
    public static func parse(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        let maximumSeconds = Self.maximum.components.seconds
        if value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // Digits only: a number past Int64 is as good as the maximum.
            guard let seconds = Int64(value) else { return Self.maximum }
            return .seconds(min(seconds, maximumSeconds))
        }
        guard let seconds = Self.httpDate(value) else { return nil }
        let delay = (Double(seconds) - now.timeIntervalSince1970).rounded(.up)
        guard delay < Double(maximumSeconds) else { return Self.maximum }
        return .seconds(max(0, Int64(delay)))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let weekdays: Set<Substring> = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// The second since 1970 of an HTTP date in its preferred form (RFC 9110's IMF-fixdate,
    /// `Sun, 06 Nov 1994 08:49:37 GMT`), read by hand: a date formatter would load ICU for one fixed format.
    static func httpDate(_ value: String) -> Int64? {
        let fields = value.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].count == 4, fields[0].last == ",", Self.weekdays.contains(fields[0].dropLast()),
            fields[1].count == 2, let day = Int64(fields[1]), let month = Self.months.firstIndex(of: String(fields[2])),
            fields[3].count == 4, let year = Int64(fields[3]), fields[5] == "GMT"
        else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int64(clock[0]), let minute = Int64(clock[1]),
            let second = Int64(clock[2])
        else { return nil }
        return UTCTime.secondsSince1970(year: year, month: Int64(month + 1), day: day, hour: hour, minute: minute, second: second)
    }
}
