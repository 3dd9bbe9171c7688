import PushgateStore
import Synchronization

/// Writes concurrent enqueues to the outbox together: while one store write is under way, the enqueues
/// that arrive wait and then go in the next write, all in one transaction. Each caller still learns
/// whether its own messages were stored (all of one write succeed or fail together), so nothing
/// accepted is lost; under load many requests share one commit instead of each paying for its own.
final class OutboxGroupCommit: Sendable {
    private typealias Waiter = (messages: [OutboxMessage], continuation: CheckedContinuation<Void, any Error>)

    private struct State {
        var waiting: [Waiter] = []
        var writing = false
    }

    private let store: any PushStore
    private let state = Mutex(State())
    /// The most messages one write takes (the rest wait for the next).
    private let maximumBatch: Int

    init(store: any PushStore, maximumBatch: Int = 5_000) {
        self.store = store
        self.maximumBatch = maximumBatch
    }

    /// Stores `messages`, together with whatever else is waiting.
    /// - Throws: the store's error when the write that carried them failed (none of them was stored then).
    func enqueue(_ messages: [OutboxMessage]) async throws {
        guard !messages.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let leads = self.state.withLock { state in
                state.waiting.append((messages, continuation))
                if state.writing { return false }
                state.writing = true
                return true
            }
            if leads { Task { await self.drain() } }
        }
    }

    /// Writes batches until nobody waits.
    private func drain() async {
        while true {
            let batch = self.state.withLock { state -> [Waiter] in
                guard !state.waiting.isEmpty else {
                    state.writing = false
                    return []
                }
                var count = 0
                var taken = 0
                while taken < state.waiting.count, taken == 0 || count + state.waiting[taken].messages.count <= self.maximumBatch {
                    count += state.waiting[taken].messages.count
                    taken += 1
                }
                defer { state.waiting.removeFirst(taken) }
                return Array(state.waiting.prefix(taken))
            }
            guard !batch.isEmpty else { return }
            do {
                _ = try await self.store.enqueue(batch.flatMap(\.messages))
                for waiter in batch { waiter.continuation.resume() }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}
