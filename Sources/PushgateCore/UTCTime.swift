public import Foundation

/// A second since 1970 in UTC as calendar fields, in the proleptic Gregorian calendar (the
/// civil-from-days conversion): for the `Date` header, the log's time stamps and RFC 3339 dates, without
/// Foundation's calendars and date formatters (which load ICU's code and data, megabytes of resident
/// memory, for a fixed format).
public struct UTCTime: Sendable {
    public let year: Int64
    /// 1 to 12.
    public let month: Int64
    public let day: Int64
    public let hour: Int64
    public let minute: Int64
    public let second: Int64
    /// 0 for Thursday (1970-01-01 was one) to 6 for Wednesday.
    public let weekdayFromThursday: Int64

    /// The fields of `secondsSince1970` (not before 1970).
    public init(secondsSince1970: Int64) {
        let days = secondsSince1970 / 86_400
        let inDay = secondsSince1970 % 86_400
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        self.day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        self.month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        self.year = yearOfEra + era * 400 + (self.month <= 2 ? 1 : 0)
        self.hour = inDay / 3_600
        self.minute = inDay % 3_600 / 60
        self.second = inDay % 60
        self.weekdayFromThursday = days % 7
    }

    /// The current second since 1970 and the milliseconds into it.
    public static func now() -> (second: Int64, milliseconds: Int) {
        let now = Date().timeIntervalSince1970
        let second = now.rounded(.down)
        return (Int64(second), min(999, Int((now - second) * 1000)))
    }

    /// `date` in RFC 3339 in UTC to the second, such as `2026-11-29T12:00:00Z` (what
    /// `ISO8601DateFormatter` writes by default); dates before 1970 are written as 1970-01-01T00:00:00Z.
    public static func rfc3339(_ date: Date) -> String {
        let time = UTCTime(secondsSince1970: max(0, Int64(date.timeIntervalSince1970.rounded(.down))))
        func digits(_ value: Int64, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(time.year, 4))-\(digits(time.month, 2))-\(digits(time.day, 2))T"
            + "\(digits(time.hour, 2)):\(digits(time.minute, 2)):\(digits(time.second, 2))Z"
    }

    /// The second since 1970 of a UTC calendar date and time (the days-from-civil conversion); nil when a
    /// field is out of its range (days past the month's end are not checked beyond 31).
    public static func secondsSince1970(year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64) -> Int64? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute),
            (0...60).contains(second), (0...9_999).contains(year)
        else { return nil }
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }
}
