import CoreMetrics
import Foundation
import Logging
@testable import PushgateGorush
import PushgateStore
import Synchronization
import Testing

/// `GET /api/stat/app` and the console read gorush's counters as the store's values plus what this
/// instance has not written yet. While a write of those counts is under way they are in neither place; a
/// read then waits for the write instead of reporting them missing.
@Suite("gorush counters read while written")
struct GorushStatsReadTests {
    /// Counters in memory whose increments wait, while `held`, until released.
    final class GatedCounterStore: CounterStore {
        private let values = Mutex<[String: Int64]>([:])
        let held = Atomic<Bool>(false)
        let waiting = Atomic<Int>(0)

        /// How many writes were made, each counted once however many counters it changed.
        let writes = Atomic<Int>(0)
        /// While set, writes fail and change nothing.
        let refusing = Atomic<Bool>(false)
        struct Refused: Error {}

        func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64 {
            try await self.incrementCounters([name: amount], expiresAt: expiresAt, now: now)
            return self.values.withLock { $0[name]! }
        }

        func incrementCounters(_ amounts: [String: Int64], expiresAt: Date?, now: Date) async throws {
            self.waiting.add(1, ordering: .relaxed)
            while self.held.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(2)) }
            self.waiting.subtract(1, ordering: .relaxed)
            if self.refusing.load(ordering: .relaxed) { throw Refused() }
            self.writes.add(1, ordering: .relaxed)
            self.values.withLock { values in
                for (name, amount) in amounts { values[name, default: 0] += amount }
            }
        }

        func counterValue(_ name: String, now: Date) async throws -> Int64 { self.values.withLock { $0[name] ?? 0 } }

        func counterValues(_ names: [String], now: Date) async throws -> [String: Int64] {
            self.values.withLock { values in values.filter { names.contains($0.key) } }
        }

        func purgeExpiredCounters(now: Date) async throws -> Int { 0 }
    }

    static func stats(_ store: GatedCounterStore) -> GorushStats {
        GorushStats(store: store, factory: NOOPMetricsHandler.instance, logger: Logger(label: "test"))
    }

    /// The total, submitted, succeeded and failed queue tasks and iOS outcomes, as `values()` orders them.
    static func figures(_ values: [Int64]) -> [Int64] {
        [GorushStats.Tally.total, .submitted, .succeededTasks, .failedTasks, .success(.ios), .error(.ios)].map { values[$0.rawValue] }
    }

    @Test func aReadDuringAWriteCountsWhatIsBeingWritten() async throws {
        let store = GatedCounterStore()
        let stats = Self.stats(store)
        stats.accepted(counts: 5, queued: 4)
        stats.delivered(.ios, succeeded: 2, failed: 1, fromQueue: true)
        #expect(Self.figures(try await stats.values()) == [5, 4, 2, 1, 2, 1])
        store.held.store(true, ordering: .relaxed)
        let flush = Task { await stats.flush() }
        while store.waiting.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        // The counters' write is under way: the counts are out of memory and not yet in the store.
        let read = Task { try await stats.values() }
        try await Task.sleep(for: .milliseconds(50))
        stats.delivered(.android, succeeded: 1, failed: 0, fromQueue: true)
        store.held.store(false, ordering: .relaxed)
        await flush.value
        let values = try await read.value
        #expect(Self.figures(values) == [5, 4, 3, 1, 2, 1])
        #expect(values[GorushStats.Tally.success(.android).rawValue] == 1)
        #expect(Self.figures(try await stats.values()) == [5, 4, 3, 1, 2, 1], "the same after the write")
    }

    @Test func aWriteThatDoesNotEndIsWaitedForOnlySoLong() async throws {
        let store = GatedCounterStore()
        let stats = Self.stats(store)
        stats.accepted(counts: 3, queued: 3)
        store.held.store(true, ordering: .relaxed)
        let flush = Task { await stats.flush() }
        while store.waiting.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(1)) }
        let started = ContinuousClock.now
        let values = try await stats.values()
        let waited = ContinuousClock.now - started
        #expect(waited >= GorushStats.longestWait && waited < GorushStats.longestWait + .seconds(5))
        #expect(Self.figures(values) == [3, 3, 0, 0, 0, 0], "counted from the write under way")
        store.held.store(false, ordering: .relaxed)
        await flush.value
    }

    @Test func aFlushWritesEveryCounterInOneWriteAndKeepsThemAllWhenItFails() async throws {
        let store = GatedCounterStore()
        let stats = Self.stats(store)
        stats.accepted(counts: 5, queued: 4)
        stats.delivered(.ios, succeeded: 2, failed: 1, fromQueue: true)
        store.refusing.store(true, ordering: .relaxed)
        await stats.flush()
        #expect(store.writes.load(ordering: .relaxed) == 0)
        #expect(Self.figures(try await stats.values()) == [5, 4, 2, 1, 2, 1], "kept in memory for the next flush")
        store.refusing.store(false, ordering: .relaxed)
        await stats.flush()
        #expect(store.writes.load(ordering: .relaxed) == 1, "six counters, one write")
        #expect(Self.figures(try await stats.values()) == [5, 4, 2, 1, 2, 1])
        #expect(try await store.counterValues([GorushStats.Tally.total.name], now: Date()) == [GorushStats.Tally.total.name: 5])
        await stats.flush()
        #expect(store.writes.load(ordering: .relaxed) == 1, "nothing left to write")
    }
}
