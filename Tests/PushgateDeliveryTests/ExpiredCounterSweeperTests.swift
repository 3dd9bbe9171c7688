import Foundation
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
            }
        }
    }
}
