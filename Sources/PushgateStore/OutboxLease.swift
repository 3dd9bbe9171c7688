public import Foundation

/// A lease written with new outbox entries: the instance that stored them delivers them itself, from
/// memory, without claiming them back from the store. Until `until` no other worker claims them; if the
/// owner stops before it finishes, they become claimable again then, as a claimed entry would.
public struct OutboxLease: Sendable, Equatable {
    /// The worker that holds the entries (the `owner` it completes and reschedules them with).
    public var owner: String
    /// When the lease ends.
    public var until: Date

    /// Creates a lease.
    public init(owner: String, until: Date) {
        self.owner = owner
        self.until = until
    }
}
