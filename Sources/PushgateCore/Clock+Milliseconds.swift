public import Foundation

extension Date {
    /// Milliseconds since 1970-01-01T00:00:00Z, the timestamp unit every Pushgate store persists.
    public var millisecondsSince1970: Int64 {
        Int64((self.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// A date from milliseconds since 1970-01-01T00:00:00Z.
    /// - Parameter milliseconds: the stored timestamp.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in nanoseconds, clamped to `Int64`.
    public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = self.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled + attoseconds / 1_000_000_000
    }

    /// The duration in seconds, as Foundation's dates count them.
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = self.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
