import Synchronization

/// A count kept in memory for the operator console (this instance's, since it started): one relaxed
/// atomic add per event, no lock and no store write on the request path.
public final class ConsoleCounter: Sendable {
    private let storage = Atomic<Int>(0)

    /// Creates a counter at 0.
    public init() {}

    /// Adds `amount` (1 by default).
    public func add(_ amount: Int = 1) {
        self.storage.wrappingAdd(amount, ordering: .relaxed)
    }

    /// The count now.
    public var value: Int { self.storage.load(ordering: .relaxed) }
}
