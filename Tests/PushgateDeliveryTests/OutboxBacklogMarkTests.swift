@testable import PushgateDelivery
import Synchronization
import Testing

/// The outbox worker's helper lanes wait on ``OutboxBacklogMark`` while rounds come back short, and start
/// when a full round is recorded.
@Suite("Outbox backlog mark")
struct OutboxBacklogMarkTests {
    /// Counts the waits that returned.
    final class Returns: Sendable {
        private let count = Atomic<Int>(0)
        func add() { self.count.add(1, ordering: .relaxed) }
        var value: Int { self.count.load(ordering: .relaxed) }
    }

    @Test func helpersWaitThroughShortRoundsAndStartOnAFullOne() async throws {
        let mark = OutboxBacklogMark()
        let returns = Returns()
        let helpers = (0..<2).map { _ in
            Task {
                await mark.waitForBacklog()
                returns.add()
            }
        }
        mark.record(roundWasFull: false)
        try await Task.sleep(for: .milliseconds(200))
        #expect(returns.value == 0, "a short round woke a helper")
        #expect(!mark.seen)
        mark.record(roundWasFull: true)
        #expect(try await DispatcherAndOutboxTests.eventually(timeout: .seconds(30)) { returns.value == 2 })
        for helper in helpers { await helper.value }
        // While the rounds are full, a helper goes on at once; after a short one it waits again.
        #expect(mark.seen)
        await mark.waitForBacklog()
        mark.record(roundWasFull: false)
        let again = Task {
            await mark.waitForBacklog()
            returns.add()
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(returns.value == 2)
        again.cancel()
        await again.value
        #expect(returns.value == 3)
    }

    @Test func aWaitCancelledBeforeItStartsReturnsAtOnce() async {
        let mark = OutboxBacklogMark()
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await mark.waitForBacklog()
        }
        await waiting.value
        #expect(!mark.seen)
    }
}
