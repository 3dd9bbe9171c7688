import Foundation
import PushgateCore
import PushgateStore
import Synchronization

/// Writes concurrent enqueues to the outbox together: while one store write is under way, the enqueues
/// that arrive wait and then go in the next write, all in one transaction. Each caller still learns
/// whether its own messages were stored (all of one write succeed or fail together), so nothing
/// accepted is lost; under load many requests share one commit instead of each paying for its own.
///
/// A write that the local worker has room for is stored leased to it and handed over in memory (see
/// ``OutboxHandOff``).
final class OutboxGroupCommit: Sendable {
    /// Messages for the tokens of one notification.
    struct Group: Sendable {
        var messages: [OutboxMessage]
        var notification: PushNotification
        var report: DeliveryReport?
    }

    private typealias Waiter = (groups: [Group], count: Int, continuation: CheckedContinuation<Void, any Error>)

    private struct State {
        var waiting: [Waiter] = []
        var writing = false
    }

    private let store: any PushStore
    private let handOff: OutboxHandOff
    private let state = Mutex(State())
    /// The most messages one write takes (the rest wait for the next).
    private let maximumBatch: Int

    init(store: any PushStore, handOff: OutboxHandOff, maximumBatch: Int = 5_000) {
        self.store = store
        self.handOff = handOff
        self.maximumBatch = maximumBatch
    }

    /// Stores `groups`, together with whatever else is waiting.
    /// - Throws: the store's error when the write that carried them failed (none of them was stored then).
    func enqueue(_ groups: [Group]) async throws {
        let count = groups.reduce(0) { $0 + $1.messages.count }
        guard count > 0 else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let leads = self.state.withLock { state in
                state.waiting.append((groups, count, continuation))
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
                while taken < state.waiting.count, taken == 0 || count + state.waiting[taken].count <= self.maximumBatch {
                    count += state.waiting[taken].count
                    taken += 1
                }
                defer { state.waiting.removeFirst(taken) }
                return Array(state.waiting.prefix(taken))
            }
            guard !batch.isEmpty else { return }
            await self.write(batch)
        }
    }

    private func write(_ batch: [Waiter]) async {
        let groups = batch.flatMap(\.groups)
        let messages = groups.flatMap(\.messages)
        let now = Date()
        // Only entries due now are handed over; delayed ones wait in the store for their time.
        let lease = messages.allSatisfy({ $0.notBefore <= now }) ? self.handOff.reserve(messages.count, now: now) : nil
        do {
            let ids = try await self.store.enqueue(messages, leasedTo: lease)
            if let lease {
                var entries: [OutboxHandOff.Entry] = []
                entries.reserveCapacity(messages.count)
                var next = 0
                for group in groups {
                    for message in group.messages where next < ids.count {
                        entries.append(
                            OutboxHandOff.Entry(
                                id: ids[next], appID: message.appID, token: message.pushToken, notification: group.notification, report: group.report,
                                createdAt: now, leaseUntil: lease.until
                            )
                        )
                        next += 1
                    }
                }
                self.handOff.fulfil(messages.count, with: entries, owner: lease.owner)
            }
            for waiter in batch { waiter.continuation.resume() }
        } catch {
            if let lease { self.handOff.fulfil(messages.count, with: [], owner: lease.owner) }
            for waiter in batch { waiter.continuation.resume(throwing: error) }
        }
    }
}
