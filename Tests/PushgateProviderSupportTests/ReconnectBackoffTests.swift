import NIOCore
import PushgateProviderSupport
import Testing

/// When a connection may be attempted again after failures.
@Suite("Reconnect backoff")
struct ReconnectBackoffTests {
    @Test func backoffGrowsWithFailuresAndResetsOnSuccess() {
        var backoff = ReconnectBackoff(random: { 0.5 })
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        #expect(backoff.remaining(at: start) == nil)
        backoff.failed(at: start)
        // The upper half of 100 ms with the random number 0.5: 75 ms.
        #expect(backoff.remaining(at: start) == .milliseconds(75))
        backoff.failed(at: start)
        #expect(backoff.remaining(at: start) == .milliseconds(150))
        for _ in 0..<30 { backoff.failed(at: start) }
        #expect(backoff.remaining(at: start) == .milliseconds(22_500))  // capped at 30 s
        #expect(backoff.remaining(at: start + .seconds(23)) == nil)
        backoff.succeeded()
        #expect(backoff.remaining(at: start) == nil && backoff.failures == 0)
    }
}
