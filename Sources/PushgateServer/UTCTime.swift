import Foundation

/// A second since 1970 in UTC as calendar fields, in the proleptic Gregorian calendar (the
/// civil-from-days conversion): for the `Date` header and the log's time stamps, without Foundation's
/// calendar and format styles.
struct UTCTime {
    let year: Int64
    /// 1 to 12.
    let month: Int64
    let day: Int64
    let hour: Int64
    let minute: Int64
    let second: Int64
    /// 0 for Thursday (1970-01-01 was one) to 6 for Wednesday.
    let weekdayFromThursday: Int64

    /// The fields of `secondsSince1970` (not before 1970).
    init(secondsSince1970: Int64) {
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
    static func now() -> (second: Int64, milliseconds: Int) {
        let now = Date().timeIntervalSince1970
        let second = now.rounded(.down)
        return (Int64(second), min(999, Int((now - second) * 1000)))
    }
}
