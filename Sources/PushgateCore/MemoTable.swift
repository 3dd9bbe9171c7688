public import Synchronization

/// Values made once per key and kept, safe to use from any thread: the first caller for a key makes the
/// value (outside the lock), and every later caller gets that same value.
///
/// Metric handles use it: looking a handle up in a metrics factory on every request costs more than the
/// request's own bookkeeping. The look-up is inlinable, so each user gets a copy specialised for its key
/// and value (an unspecialised one looked up the generic types' metadata on every call).
public final class MemoTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline let values = Mutex<[Key: Value]>([:])

    /// Creates an empty table.
    public init() {}

    /// The value kept for `key`, made by `make` on first use. If two callers race, both may call `make`,
    /// but only the first value is kept and returned to both.
    @inlinable
    public func value(for key: Key, make: () -> Value) -> Value {
        if let value = self.values.withLock({ $0[key] }) { return value }
        let made = make()
        return self.values.withLock { values in
            if let existing = values[key] { return existing }
            values[key] = made
            return made
        }
    }
}
