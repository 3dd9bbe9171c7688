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
        /// The front end that queued it.
        let frontEnd: String
        /// The tokens it delivers to (at least one).
        let tokens: [String]
        /// Shared with the other entries of its notification.
        let content: OutboxContent
        let createdAt: Date
        /// When its lease in the store ends: after that another worker may claim it.
        let leaseUntil: Date
    }

    /// Where entries take turns: an app and one of its front ends.
    private struct Lane: Hashable {
        let appID: String
        let frontEnd: String
    }

    private struct State {
        /// The lease new entries get; nil while no worker takes them.
        var lease: (owner: String, duration: Duration)?
        /// The waiting entries of each lane with any, oldest first.
        var queues: [Lane: ArrayQueue<Entry>] = [:]
        /// The lanes with waiting entries, in turn: ``take(_:)`` goes round them from `next` on.
        var rotation: [Lane] = []
        var next = 0
        /// The tokens of the waiting entries.
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
                state.queues = [:]
                state.rotation = []
                state.next = 0
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
            for entry in entries {
                // A lane that had nothing waiting joins the round just before the lane whose turn is next,
                // so it waits at most one turn of each other lane.
                let lane = Lane(appID: entry.appID, frontEnd: entry.frontEnd)
                if state.queues[lane] == nil {
                    state.rotation.insert(lane, at: state.next)
                    state.next += 1
                }
                state.queues[lane, default: ArrayQueue()].append(entry)
                state.queuedTokens += entry.tokens.count
            }
        }
    }

    /// Waiting entries round-robin across lanes, an app and one of its front ends (each lane's oldest in
    /// turn, from the lane after the last one served, so a fresh entry of one app, or of one front end of
    /// an app, is taken before another lane's older ones run out) that hold at most `limit` tokens
    /// together, and at least one (whatever its tokens). Within a lane, oldest first.
    func take(_ limit: Int) -> [Entry] {
        self.state.withLock { state in
            var taken: [Entry] = []
            var tokens = 0
            while !state.rotation.isEmpty {
                if state.next >= state.rotation.count { state.next = 0 }
                let lane = state.rotation[state.next]
                guard let entry = state.queues[lane]?.first else { break }
                // The round stops at the first entry that does not fit: that lane's turn comes first next time.
                guard taken.isEmpty || tokens + entry.tokens.count <= limit else { break }
                taken.append(entry)
                tokens += entry.tokens.count
                state.queues[lane]!.popFirst()
                if state.queues[lane]!.first == nil {
                    state.queues[lane] = nil
                    state.rotation.remove(at: state.next)
                } else {
                    state.next += 1
                }
            }
            state.queuedTokens -= tokens
            return taken
        }
    }

    /// How many tokens wait.
    var waiting: Int { self.state.withLock { $0.queuedTokens } }

}
