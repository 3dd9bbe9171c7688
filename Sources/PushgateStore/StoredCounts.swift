public import Foundation
public import Logging
public import ServiceLifecycle
import Synchronization

/// A fixed set of counts that every instance on one store adds to: counts gather in memory and go to the
/// store's counters (that never expire) once a second and at shutdown, in one write, instead of a store
/// write for every event. A read is the store's values plus what this instance has not written yet, so an
/// instance sees its own counts at once and the others' within about a second.
///
/// Between taking the counts for a write and the store's answer they are in neither place, so a read
/// that meets such a write (or begins during it) is made again after it, waiting at most
/// ``longestWait``. A write the store refuses keeps its counts for the next one. Without a store the
/// counts stay in memory (this instance's since it started).
public final class StoredCounts: Service, Sendable {
    /// The store's counter names, one a count, in the order of the counts' indices.
    public let names: [String]
    private let store: (any CounterStore)?
    /// The counts not written yet, and the writes of them under way.
    private struct Unwritten {
        /// By index (a fixed array: no counter name is made or hashed per event).
        var counts: [Int64]
        /// The counts of the writes under way: in the store only once their write returns.
        var inFlight: [Int64]
        /// Writes under way.
        var writing = 0
        /// Raised when a write begins and when it ends.
        var generation = 0
    }
    private let pending: Mutex<Unwritten>
    /// The pause before reading again after a read met a write.
    static let rereadPause: Duration = .milliseconds(5)
    /// How long a read waits for writes under way before it counts their counts as unwritten (they may
    /// then be counted twice, if their write lands meanwhile).
    public static let longestWait: Duration = .seconds(2)
    private let logger: Logger
    /// Names the counts in the log line of a refused write.
    private let label: String

    /// Counts named `names` in `store` (in memory only when nil); `label` names them in the log.
    public init(names: [String], store: (any CounterStore)?, label: String, logger: Logger) {
        self.names = names
        self.store = store
        self.label = label
        self.logger = logger
        self.pending = Mutex(Unwritten(counts: Array(repeating: 0, count: names.count), inFlight: Array(repeating: 0, count: names.count)))
    }

    /// Adds `amount` to the count at `index`.
    public func add(_ amount: Int64 = 1, at index: Int) {
        self.pending.withLock { $0.counts[index] += amount }
    }

    /// Adds to several counts at once (`body` changes the unwritten counts, by index): a read sees all
    /// of them or none.
    public func add(_ body: (inout [Int64]) -> Void) {
        self.pending.withLock { body(&$0.counts) }
    }

    /// Each count, by index: the store's value plus what this instance has not written yet. A read of the
    /// store that a write of these counts began before or during is made again once no write is under
    /// way; after ``longestWait`` the counts of the writes under way are added as unwritten.
    /// - Throws: when the store cannot be read.
    public func values() async throws -> [Int64] {
        guard let store = self.store else { return self.pending.withLock { $0.counts } }
        let deadline = ContinuousClock.now + Self.longestWait
        while true {
            let before = self.pending.withLock { (writing: $0.writing, generation: $0.generation) }
            let late = ContinuousClock.now >= deadline
            if before.writing == 0 || late {
                let stored = try await store.counterValues(self.names, now: Date())
                let unwritten = self.pending.withLock { pending -> [Int64]? in
                    if before.writing == 0, pending.generation == before.generation { return pending.counts }
                    return late ? zip(pending.counts, pending.inFlight).map(+) : nil
                }
                if let unwritten { return self.names.indices.map { (stored[self.names[$0]] ?? 0) + unwritten[$0] } }
            }
            try await Task.sleep(for: Self.rereadPause)
        }
    }

    /// Writes the gathered counts once a second until shutdown, then once more. Only the pause between
    /// writes ends at a graceful shutdown: a write under way is awaited, never abandoned (an abandoned
    /// write may still commit, and its counts, kept for the next write, would be written twice).
    public func run() async throws {
        guard self.store != nil else { return }
        while true {
            await cancelWhenGracefulShutdown { try? await Task.sleep(for: .seconds(1)) }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            await self.flush()
        }
        await self.flush(final: true)
    }

    /// Writes the gathered counts to the store, in one transaction (a reader of the store never sees some
    /// of them without the others); what cannot be written is kept for the next attempt (a write that
    /// missed its deadline against a stalled database may still commit: its counts are then written twice).
    /// - Parameter final: the last write before the process ends: what it cannot write is lost, and said so.
    public func flush(final: Bool = false) async {
        guard let store = self.store else { return }
        let taken = self.pending.withLock { pending -> [Int64]? in
            guard pending.counts.contains(where: { $0 != 0 }) else { return nil }
            pending.writing += 1
            pending.generation += 1
            let taken = pending.counts
            for index in taken.indices {
                pending.inFlight[index] += taken[index]
                pending.counts[index] = 0
            }
            return taken
        }
        guard let taken else { return }
        var amounts: [String: Int64] = [:]
        for index in taken.indices where taken[index] != 0 { amounts[self.names[index]] = taken[index] }
        var written = true
        do {
            try await store.incrementCounters(amounts, expiresAt: nil, now: Date())
        } catch {
            written = false
            if final {
                self.logger.warning("\(self.label): counters not written at shutdown", metadata: ["error": "\(error)", "lost": "\(taken.reduce(0, +))"])
            } else {
                self.logger.debug("\(self.label): counters not written yet", metadata: ["error": "\(error)"])
            }
        }
        // In one step: a reader never sees the counts both in flight and back among the unwritten.
        self.pending.withLock { pending in
            for index in taken.indices {
                pending.inFlight[index] -= taken[index]
                if !written { pending.counts[index] += taken[index] }
            }
            pending.writing -= 1
            pending.generation += 1
        }
    }
}
