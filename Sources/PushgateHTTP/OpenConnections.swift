import Synchronization

/// The open connections of every listener together (HTTP, metrics, gorush's gRPC), against one cap: the
/// descriptors they hold, whichever port a flood comes to, stay below the process's limit.
public final class OpenConnections: Sendable {
    /// The most connections served at once.
    public let limit: Int
    private let count = Atomic<Int>(0)

    /// Creates the count, none open.
    public init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection in.
    /// - Returns: false (and it is not counted) when the cap is reached.
    public func open() -> Bool {
        let now = self.count.wrappingAdd(1, ordering: .relaxed).newValue
        guard now <= self.limit else {
            self.count.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// A counted connection closed.
    public func close() {
        self.count.wrappingSubtract(1, ordering: .relaxed)
    }

    /// How many are open now.
    public var current: Int { self.count.load(ordering: .relaxed) }
}
