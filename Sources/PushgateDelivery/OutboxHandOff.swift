import Foundation
import PushgateCore
import PushgateStore
import Synchronization

/// Entries this instance has just written to the outbox, handed to its own running worker in memory.
///
/// While the worker runs, an enqueue that fits the hand-off's room is stored already leased to the
/// worker (``OutboxLease``) and then given to it with its notification decoded, so the worker neither
/// claims it back from the store nor decodes it: the store sees one write to queue an entry (up to
/// ``Dispatcher/tokensPerOutboxEntry`` tokens of one notification) and one to finish it. The entry is
/// durable all along; if the process stops before finishing it, the lease runs out and any worker claims
/// it, as with a claimed entry. When the worker is not running (a one-shot command, or shutdown has
/// begun) or the room is taken, enqueues are stored unleased for whoever claims them.
final class OutboxHandOff: Sendable {
    /// One handed-over entry.
    struct Entry: Sendable {
        let id: Int64
        let appID: String
        /// The tokens it delivers to (at least one).
        let tokens: [String]
        /// Shared with the other entries of its notification.
        let content: OutboxContent
        let createdAt: Date
        /// When its lease in the store ends: after that another worker may claim it.
        let leaseUntil: Date
    }

    private struct State {
        /// The lease new entries get; nil while no worker takes them.
        var lease: (owner: String, duration: Duration)?
        var queue: [Entry] = []
        var head = 0
        /// The tokens of the entries from `head` on.
        var queuedTokens = 0
        /// Room (tokens) promised to writes under way.
        var reserved = 0
    }

    private let state = Mutex(State())
    /// The most tokens waiting or promised at once; beyond it enqueues go to the store for claiming.
    let capacity: Int

    init(capacity: Int = 4_096) {
        self.capacity = capacity
    }

    /// The worker starts taking entries, leased to `owner` for `lease`.
    func open(owner: String, lease: Duration) {
        self.state.withLock { $0.lease = (owner, lease) }
    }

    /// The worker stops taking entries. Those still waiting stay leased in the store until their lease
    /// runs out. - Returns: how many tokens were waiting.
    @discardableResult
    func close() -> Int {
        self.state.withLock { state in
            state.lease = nil
            defer {
                state.queue = []
                state.head = 0
                state.queuedTokens = 0
            }
            return state.queuedTokens
        }
    }

    /// Promises room for `count` tokens and returns the lease to write them with; nil when no worker
    /// takes them or there is no room (then store them unleased).
    func reserve(_ count: Int, now: Date) -> OutboxLease? {
        self.state.withLock { state in
            guard let lease = state.lease, state.queuedTokens + state.reserved + count <= self.capacity else { return nil }
            state.reserved += count
            return OutboxLease(owner: lease.owner, until: now.addingTimeInterval(lease.duration.timeInterval))
        }
    }

    /// Hands over the entries a reservation of `count` tokens was for, once they are stored (none when the
    /// write failed: the room is given back).
    func fulfil(_ count: Int, with entries: [Entry], owner: String) {
        self.state.withLock { state in
            state.reserved -= count
            // A worker that closed (or another that opened since) does not take them: their lease runs
            // out in the store and they are claimed then.
            guard state.lease?.owner == owner else { return }
            state.queue += entries
            state.queuedTokens += entries.reduce(0) { $0 + $1.tokens.count }
        }
    }

    /// The oldest waiting entries that hold at most `limit` tokens together, and at least the oldest one
    /// (whatever its tokens).
    func take(_ limit: Int) -> [Entry] {
        self.state.withLock { state in
            var end = state.head
            var tokens = 0
            while end < state.queue.count, end == state.head || tokens + state.queue[end].tokens.count <= limit {
                tokens += state.queue[end].tokens.count
                end += 1
            }
            guard end > state.head else { return [] }
            let taken = Array(state.queue[state.head..<end])
            state.head = end
            state.queuedTokens -= tokens
            if state.head == state.queue.count {
                state.queue.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 1_024, state.head * 2 >= state.queue.count {
                state.queue.removeFirst(state.head)
                state.head = 0
            }
            return taken
        }
    }

    /// How many tokens wait.
    var waiting: Int { self.state.withLock { $0.queuedTokens } }

}
