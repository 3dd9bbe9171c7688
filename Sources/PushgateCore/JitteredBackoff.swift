/// Exponential backoff with jitter, the one formula for every retry: the pause after `failures` failed
/// attempts in a row is `initial` doubled for each failure after the first, at most `maximum`, then a
/// random point in that pause's upper half (so clients that failed together spread out, and none retries
/// sooner than half the pause).
public enum JitteredBackoff {
    /// The pause after `failures` failed attempts in a row (1 after the first failure).
    /// - Parameter random: a number in 0..<1 (injected by tests).
    public static func pause(afterFailures failures: Int, initial: Duration, maximum: Duration, random: Double) -> Duration {
        let exponent = min(max(failures - 1, 0), 30)
        let backoff = min(initial * (1 << exponent), maximum)
        return backoff / 2 + backoff / 2 * random
    }
}
