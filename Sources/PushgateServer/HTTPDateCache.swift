import Foundation
import Synchronization

/// The `Date` header's value (RFC 9110 §5.6.7, `Sun, 06 Nov 1994 08:49:37 GMT`), formatted once a second.
final class HTTPDateCache: Sendable {
    private let cached = Mutex<(second: Int64, text: String)>((-1, ""))

    /// The current time's value.
    func current() -> String {
        let second = Int64(Date().timeIntervalSince1970.rounded(.down))
        return self.cached.withLock { cached in
            if cached.second != second {
                cached = (second, Self.format(second))
            }
            return cached.text
        }
    }

    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The value for `second` (seconds since the epoch, not before it), in the proleptic Gregorian
    /// calendar (the civil-from-days conversion).
    static func format(_ second: Int64) -> String {
        let days = second / 86_400
        let inDay = second % 86_400
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(Self.days[Int(days % 7)]), \(two(day)) \(Self.months[Int(month - 1)]) \(year) "
            + "\(two(inDay / 3_600)):\(two(inDay % 3_600 / 60)):\(two(inDay % 60)) GMT"
    }
}
