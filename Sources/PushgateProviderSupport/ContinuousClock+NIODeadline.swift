public import NIOCore

extension ContinuousClock.Instant {
    /// The same moment as a NIO deadline (for AsyncHTTPClient and our own connections).
    public var nioDeadline: NIODeadline {
        let remaining = ContinuousClock.now.duration(to: self)
        return NIODeadline.now() + .nanoseconds(remaining.nanosecondsClamped)
    }
}

extension Duration {
    /// The duration in nanoseconds, clamped to `Int64`.
    public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = self.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled + attoseconds / 1_000_000_000
    }
}
