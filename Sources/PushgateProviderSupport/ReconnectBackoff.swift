public import NIOCore
import PushgateCore

/// When a connection may be attempted again after failed attempts: not before an exponential backoff
/// (``initial`` doubling up to ``maximum``) with jitter in its upper half has passed since the last
/// failure; at once after a success or before any failure. A dead connection that is replaced therefore
/// reconnects at once, and a server that refuses connections is not hammered.
public struct ReconnectBackoff: Sendable {
    /// The pause after the first failure.
    public var initial: TimeAmount
    /// The longest pause.
    public var maximum: TimeAmount
    /// Failed attempts in a row.
    public private(set) var failures = 0
    private var notBefore: NIODeadline?
    private let random: @Sendable () -> Double

    /// Creates a backoff.
    /// - Parameter random: a number in 0..<1 (injected by tests).
    public init(
        initial: TimeAmount = .milliseconds(100), maximum: TimeAmount = .seconds(30),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.initial = initial
        self.maximum = maximum
        self.random = random
    }

    /// How long until an attempt may be made at `now`; nil when it may be made now.
    public func remaining(at now: NIODeadline) -> TimeAmount? {
        guard let notBefore = self.notBefore, notBefore > now else { return nil }
        return notBefore - now
    }

    /// An attempt failed at `now`: the next waits longer.
    public mutating func failed(at now: NIODeadline) {
        self.failures += 1
        let pause = JitteredBackoff.pause(
            afterFailures: self.failures, initial: .nanoseconds(self.initial.nanoseconds), maximum: .nanoseconds(self.maximum.nanoseconds),
            random: self.random()
        )
        self.notBefore = now + .nanoseconds(pause.nanosecondsClamped)
    }

    /// An attempt succeeded: the next may be made at once.
    public mutating func succeeded() {
        self.failures = 0
        self.notBefore = nil
    }
}
