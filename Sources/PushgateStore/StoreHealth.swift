/// What `/health` reports of the store.
public enum StoreHealth: Sendable, Equatable {
    /// It answers and its last write succeeded.
    case healthy
    /// It does not answer (or not in time).
    case unreachable(reason: String)
    /// It answers reads, but writes fail (a full disk, a read-only database).
    case notWritable(reason: String)
}
