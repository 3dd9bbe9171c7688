import Foundation
import PushgateProviderSupport
import Synchronization
import Testing

/// The system resolver blocks a thread a lookup: a resolver that hangs must neither hold its callers
/// past a bound nor take thread after thread.
@Suite struct HostResolverTests {
    /// A lookup that blocks until the test lets it go.
    final class Gate: Sendable {
        private let open = Mutex(false)
        let started = Mutex(0)
        func release() { self.open.withLock { $0 = true } }
        func lookup(_ host: String) -> HostResolver.Answer {
            self.started.withLock { $0 += 1 }
            while !self.open.withLock({ $0 }) { usleep(5_000) }
            return .addresses([.v4([192, 0, 2, 1])])
        }
    }

    @Test func aHangingLookupFailsAtTheTimeoutAndLookupsOverTheLimitWaitWithoutAThread() async throws {
        let gate = Gate()
        defer { gate.release() }
        let resolver = HostResolver.bounded({ gate.lookup($0) }, limit: 2, timeout: .milliseconds(300))
        let started = ContinuousClock.now
        async let first = resolver.lookup("one.example")
        async let second = resolver.lookup("two.example")
        while gate.started.withLock({ $0 }) < 2, ContinuousClock.now - started < .seconds(10) { try await Task.sleep(for: .milliseconds(5)) }
        // Both threads are blocked: a third lookup does not take another; it waits for a place, and
        // fails at its own timeout.
        #expect(await resolver.lookup("three.example") == .failed)
        #expect(gate.started.withLock { $0 } == 2)
        #expect(await first == .failed)
        #expect(await second == .failed)
        #expect(ContinuousClock.now - started < .seconds(5), "the callers waited for the timeout, not for the lookups")
        gate.release()
        // Once the blocked lookups return, their places are free again.
        let freed = ContinuousClock.now
        var answer = HostResolver.Answer.failed
        while answer == .failed, ContinuousClock.now - freed < .seconds(10) {
            answer = await resolver.lookup("four.example")
            if answer == .failed { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(answer == .addresses([.v4([192, 0, 2, 1])]))
    }
}
