import PushgateCore

/// The `Date` header's value (RFC 9110 §5.6.7, `Sun, 06 Nov 1994 08:49:37 GMT`), formatted once a second.
final class HTTPDateCache: Sendable {
    private let cached = OncePerSecond<String>(HTTPDateCache.format)

    /// The current time's value.
    func current() -> String {
        self.cached.text(for: UTCTime.now().second)
    }

    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The value for `second` (seconds since the epoch, not before it).
    @Sendable static func format(_ second: Int64) -> String {
        let time = UTCTime(secondsSince1970: second)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(Self.days[Int(time.weekdayFromThursday)]), \(two(time.day)) \(Self.months[Int(time.month - 1)]) \(time.year) "
            + "\(two(time.hour)):\(two(time.minute)):\(two(time.second)) GMT"
    }
}
