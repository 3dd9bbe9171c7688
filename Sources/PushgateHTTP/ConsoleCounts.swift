public import Logging
public import PushgateStore

/// A front end's counts for the operator console, kept as the store's counters `console:FRONT_END:KEY`
/// (``StoredCounts``): every instance on one store adds to the same figures, and they survive restarts.
/// An event is a lock and an add in memory; the store is written once a second.
public final class ConsoleCounts: Sendable {
    /// What writes the counts to the store (a service the front end runs).
    public let stored: StoredCounts

    /// Counts for `frontEnd`'s figures `keys` (by index), in `store` (in memory only when nil).
    public init(frontEnd: String, keys: [String], store: (any CounterStore)?, logger: Logger) {
        self.stored = StoredCounts(names: keys.map { "console:\(frontEnd):\($0)" }, store: store, label: frontEnd, logger: logger)
    }

    /// Adds `amount` (1 by default) to the count at `index`.
    public func add(_ amount: Int = 1, at index: Int) {
        self.stored.add(Int64(amount), at: index)
    }

    /// Each count as a figure's value, by index; `unavailable` for each while the store cannot be read.
    public func values() async -> [FrontEndFigure.Value] {
        guard let values = try? await self.stored.values() else {
            return Array(repeating: .text("unavailable"), count: self.stored.names.count)
        }
        return values.map { .count(Int($0)) }
    }
}
