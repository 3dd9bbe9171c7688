import Foundation
import Logging
import PushgateTestSupport
import Synchronization
import PushgateDelivery
import PushgateStore
import PushgateStoreSQLite
import Testing

@Suite("Expired counter sweeper")
struct ExpiredCounterSweeperTests {
    @Test func expiredCountersAreDeletedAndLiveOnesKept() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let sweeper = ExpiredCounterSweeper(store: store, interval: .milliseconds(50), logger: TestLogging.quiet)
        try await DispatcherAndOutboxTests.running([store]) { () async throws in
            let now = Date()
            _ = try await store.incrementCounter("stale", by: 1, expiresAt: now.addingTimeInterval(-1), now: now.addingTimeInterval(-2))
            _ = try await store.incrementCounter("live", by: 1, expiresAt: now.addingTimeInterval(600), now: now)
            // Read as of before its expiry, the stale counter is still there until the sweeper deletes its row
            // (the sweeper starts only now, so a loaded machine cannot let it run first).
            #expect(try await store.counterValues(["stale"], now: now.addingTimeInterval(-2)) == ["stale": 1])
            try await DispatcherAndOutboxTests.running([sweeper]) { () async throws in
                let swept = try await DispatcherAndOutboxTests.eventually {
                    try await store.counterValues(["stale"], now: now.addingTimeInterval(-2)).isEmpty
                }
                #expect(swept)
                #expect(try await store.counterValue("live", now: Date()) == 1)
                // Invalid-token records older than the retention (30 days) go too.
                for (token, age) in [("old", 31.0), ("recent", 29.0)] {
                    try await store.recordInvalidToken(InvalidTokenRecord(appID: "a", pushToken: token, reason: "410", recordedAt: now.addingTimeInterval(-age * 86_400)))
                }
                let purged = try await DispatcherAndOutboxTests.eventually { try await store.invalidToken(appID: "a", pushToken: "old") == nil }
                #expect(purged)
                #expect(try await store.invalidToken(appID: "a", pushToken: "recent") != nil)
            }
        }
    }
}

/// A counter store whose sweep waits until its task is cancelled (or fails at once with `failure`), and
/// says when a sweep has begun.
final class StallingCounterStore: CounterStore, InvalidTokenStore {
    struct Refused: Error {}
    let sweepsBegun = Atomic<Int>(0)
    let fails: Bool

    init(fails: Bool) { self.fails = fails }

    func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64 { amount }
    func incrementCounters(_ amounts: [String: Int64], expiresAt: Date?, now: Date) async throws {}
    func counterValue(_ name: String, now: Date) async throws -> Int64 { 0 }
    func counterValues(_ names: [String], now: Date) async throws -> [String: Int64] { [:] }
    func purgeExpiredCounters(now: Date) async throws -> Int {
        self.sweepsBegun.add(1, ordering: .relaxed)
        if self.fails { throw Refused() }
        try await Task.sleep(for: .seconds(600))
        return 0
    }

    func recordInvalidToken(_ record: InvalidTokenRecord) async throws {}
    func invalidToken(appID: String, pushToken: String) async throws -> InvalidTokenRecord? { nil }
    func clearInvalidToken(appID: String, pushToken: String) async throws -> Bool { false }
    func invalidTokens(since: Date, limit: Int) async throws -> [InvalidTokenRecord] { [] }
    func purgeInvalidTokens(recordedBefore cutoff: Date) async throws -> Int { 0 }
}

@Suite("Expired counter sweeper shutdown")
struct ExpiredCounterSweeperShutdownTests {
    /// Runs a sweeper on `store` until a sweep has begun, then stops it gracefully; what it logged.
    static func runUntilASweepBegins(_ store: StallingCounterStore) async throws -> LogRecorder {
        let log = LogRecorder()
        let sweeper = ExpiredCounterSweeper(store: store, interval: .milliseconds(1), logger: log.logger())
        try await DispatcherAndOutboxTests.running([sweeper]) {
            let begun = try await DispatcherAndOutboxTests.eventually { store.sweepsBegun.load(ordering: .relaxed) > 0 }
            #expect(begun)
        }
        return log
    }

    @Test func aSweepCutShortByShutdownLogsNoWarning() async throws {
        let log = try await Self.runUntilASweepBegins(StallingCounterStore(fails: false))
        #expect(log.messages(atLeast: .warning) == [])
        #expect(log.all.contains { $0.level == .debug && $0.message == "could not remove expired counters" })
    }

    @Test func aSweepTheStoreRefusesIsAWarning() async throws {
        let log = try await Self.runUntilASweepBegins(StallingCounterStore(fails: true))
        #expect(log.messages(atLeast: .warning).first == "could not remove expired counters")
    }
}
