public import NIOCore
import PushgateCore

extension ContinuousClock.Instant {
    /// The same moment as a NIO deadline (for AsyncHTTPClient and our own connections).
    public var nioDeadline: NIODeadline {
        let remaining = ContinuousClock.now.duration(to: self)
        return NIODeadline.now() + .nanoseconds(remaining.nanosecondsClamped)
    }
}
