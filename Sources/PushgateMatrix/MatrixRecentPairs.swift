import Foundation
import PushgateCore

/// The pairs this instance delivered, each until its window ends: at most ``limit`` of them, the oldest
/// forgotten first when a new one needs room.
///
/// Pairs are kept in the order they were delivered, which is the order their windows end (every pair has
/// the same window), so each insertion drops the few pairs whose window has ended from the front of that
/// order: the cost of forgetting is spread over the deliveries, never a pass over the whole memory.
struct MatrixRecentPairs {
    /// The most pairs kept.
    let limit: Int
    /// Each pair's end of window.
    private var expiries: [MatrixPairDigest: Date] = [:]
    /// Pairs in the order they were recorded, with the end of window each was recorded with; a pair
    /// recorded again appears twice, and only its last entry (the one `expiries` agrees with) counts.
    private var order = ArrayQueue<(pair: MatrixPairDigest, expiry: Date)>()

    /// An empty memory of at most `limit` pairs (at least one).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// How many pairs are kept.
    var count: Int { self.expiries.count }

    /// Whether `pair` is kept and its window has not ended at `now`.
    func contains(_ pair: MatrixPairDigest, at now: Date) -> Bool {
        self.expiries[pair].map { $0 > now } ?? false
    }

    /// Keeps `pair` until `expiry`, first forgetting the pairs whose window ended by `now` and, when the
    /// memory is full, the oldest.
    mutating func insert(_ pair: MatrixPairDigest, until expiry: Date, now: Date) {
        while let first = self.order.first, first.expiry <= now { self.dropFirst() }
        while self.expiries.count >= self.limit, self.expiries[pair] == nil, !self.order.isEmpty { self.dropFirst() }
        self.expiries[pair] = expiry
        self.order.append((pair, expiry))
        // A pair recorded again and again (without others between) leaves stale entries behind: bound them.
        while self.order.count > 2 * self.limit { self.dropFirst() }
    }

    /// Forgets the oldest entry of `order`, and its pair unless the pair was recorded again since.
    private mutating func dropFirst() {
        guard let (pair, expiry) = self.order.popFirst() else { return }
        if self.expiries[pair] == expiry { self.expiries[pair] = nil }
    }
}
