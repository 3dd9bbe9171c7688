import Foundation
import PushgateCore
import PushgateStore

/// Writes concurrent enqueues to the outbox together (a ``WriteCoalescer``): the enqueues that arrive while
/// one store write is under way go in the next write, all in one transaction. Each caller still learns
/// whether its own messages were stored (all of one write succeed or fail together), so nothing accepted
/// is lost; under load many requests share one commit instead of each paying for its own.
///
/// A write that the local worker has room for is stored leased to it and handed over in memory (see
/// ``OutboxHandOff``).
final class OutboxGroupCommit: Sendable {
    /// The entries for the tokens of one notification.
    struct Group: Sendable {
        var messages: [OutboxMessage]
        var notification: PushNotification
        var report: DeliveryReport?

        /// How many tokens its entries hold.
        var tokenCount: Int { self.messages.reduce(0) { $0 + $1.pushTokens.count } }
    }

    private let writes: WriteCoalescer<[Group], Void>

    init(store: any PushStore, handOff: OutboxHandOff, maximumBatch: Int = 5_000) {
        self.writes = WriteCoalescer(maximumWeight: maximumBatch) { batch in
            try await Self.write(batch.flatMap { $0 }, to: store, handOff: handOff)
            return batch.map { _ in () }
        }
    }

    /// Stores `groups`, together with whatever else is waiting.
    /// - Throws: the store's error when the write that carried them failed (none of them was stored then).
    func enqueue(_ groups: [Group]) async throws {
        let count = groups.reduce(0) { $0 + $1.tokenCount }
        guard count > 0 else { return }
        try await self.writes.submit(groups, weight: count)
    }

    private static func write(_ groups: [Group], to store: any PushStore, handOff: OutboxHandOff) async throws {
        let messages = groups.flatMap(\.messages)
        let tokens = groups.reduce(0) { $0 + $1.tokenCount }
        let now = Date()
        // Only entries due now are handed over; delayed ones wait in the store for their time.
        let lease = messages.allSatisfy({ $0.notBefore <= now }) ? handOff.reserve(tokens, now: now) : nil
        let ids: [Int64]
        do {
            ids = try await store.enqueue(messages, leasedTo: lease)
        } catch {
            if let lease { handOff.fulfil(tokens, with: [], owner: lease.owner) }
            throw error
        }
        guard let lease else { return }
        var entries: [OutboxHandOff.Entry] = []
        entries.reserveCapacity(messages.count)
        var next = 0
        for group in groups {
            let content = OutboxContent(notification: group.notification, report: group.report)
            for message in group.messages where next < ids.count {
                entries.append(
                    OutboxHandOff.Entry(
                        id: ids[next], appID: message.appID, frontEnd: message.frontEnd, tokens: message.pushTokens, content: content,
                        createdAt: now, leaseUntil: lease.until
                    )
                )
                next += 1
            }
        }
        handOff.fulfil(tokens, with: entries, owner: lease.owner)
    }
}
