import Synchronization

/// The open connections of one listener, against its cap.
final class OpenConnections: Sendable {
    /// The most connections served at once.
    let limit: Int
    private let count = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection in.
    /// - Returns: false (and it is not counted) when the cap is reached.
    func open() -> Bool {
        let now = self.count.wrappingAdd(1, ordering: .relaxed).newValue
        guard now <= self.limit else {
            self.count.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// A counted connection closed.
    func close() {
        self.count.wrappingSubtract(1, ordering: .relaxed)
    }

    /// How many are open now.
    var current: Int { self.count.load(ordering: .relaxed) }
}
