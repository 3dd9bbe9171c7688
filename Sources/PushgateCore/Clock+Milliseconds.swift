public import Foundation

extension Date {
    /// Milliseconds since 1970-01-01T00:00:00Z, the timestamp unit every Pushgate store persists; a date
    /// beyond what `Int64` milliseconds hold (about 292 million years away) gives the nearest end.
    public var millisecondsSince1970: Int64 {
        let milliseconds = (self.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds > -9.2e18 else { return .min }
        guard milliseconds < 9.2e18 else { return .max }
        return Int64(milliseconds)
    }

    /// A date from milliseconds since 1970-01-01T00:00:00Z.
    /// - Parameter milliseconds: the stored timestamp.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down, clamped to `Int64`.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = self.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return sumOverflow ? (scaled < 0 ? .min : .max) : sum
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
