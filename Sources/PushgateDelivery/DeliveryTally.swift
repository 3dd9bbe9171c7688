public import Foundation
public import PushgateStore
import Synchronization

/// Deliveries counted in memory per app, front end, outcome and minute, between two flushes to the store
/// (``DeliveryCountFlusher``): the delivery path only adds to a dictionary under a lock, never waits on
/// the store.
public final class DeliveryTally: Sendable {
    private struct Key: Hashable {
        var appID: String
        var frontEnd: String
        var outcome: String
        var minute: Int64
    }

    private let pending = Mutex<[Key: Int64]>([:])

    /// An empty tally.
    public init() {}

    /// The minute of `date`, counted from 1970-01-01T00:00Z.
    public static func minute(of date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / 60).rounded(.down))
    }

    /// Counts one delivery.
    public func record(appID: String, frontEnd: String, outcome: String, at date: Date = Date()) {
        let key = Key(appID: appID, frontEnd: frontEnd, outcome: outcome, minute: Self.minute(of: date))
        self.pending.withLock { $0[key, default: 0] += 1 }
    }

    /// Takes every count made since the last take, leaving the tally empty.
    public func take() -> [DeliveryCount] {
        let taken = self.pending.withLock { pending in
            let taken = pending
            pending = [:]
            return taken
        }
        return taken.map { DeliveryCount(appID: $0.key.appID, frontEnd: $0.key.frontEnd, outcome: $0.key.outcome, minute: $0.key.minute, count: $0.value) }
    }

    /// Puts back counts a flush could not store, for the next one.
    public func giveBack(_ counts: [DeliveryCount]) {
        self.pending.withLock { pending in
            for count in counts {
                pending[Key(appID: count.appID, frontEnd: count.frontEnd, outcome: count.outcome, minute: count.minute), default: 0] += count.count
            }
        }
    }

    /// How many deliveries wait for the next flush.
    public var pendingTotal: Int64 {
        self.pending.withLock { $0.values.reduce(0, +) }
    }
}
