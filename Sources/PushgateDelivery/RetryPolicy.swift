import PushgateCore

/// When to try a failed outbox delivery again, and when to give up.
public struct RetryPolicy: Sendable {
    /// The first pause.
    public var initialDelay: Duration
    /// The longest pause.
    public var maximumDelay: Duration
    /// Entries older than this are dropped instead of retried.
    public var maximumAge: Duration

    /// Creates a policy; the defaults retry after 1 s, doubling up to 10 minutes, for up to a day.
    public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(600), maximumAge: Duration = .seconds(86_400)) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumAge = maximumAge
    }

    /// The pause before attempt `attempts + 1`: exponential with full jitter in its upper half, never
    /// shorter than what the provider asked for.
    /// - Parameters:
    ///   - attempts: attempts made so far (1 after the first failure).
    ///   - requested: the provider's Retry-After, if any.
    ///   - random: a number in 0..<1 (injected for tests).
    public func delay(afterAttempts attempts: Int, requested: Duration?, random: Double) -> Duration {
        let jittered = JitteredBackoff.pause(afterFailures: attempts, initial: self.initialDelay, maximum: self.maximumDelay, random: random)
        guard let requested else { return jittered }
        return max(jittered, min(requested, self.maximumAge))
    }
}
