import Foundation
import PushgateCore
import PushgateStore
import Testing

@Suite("CounterStore conformance")
struct CounterStoreConformanceTests {
    static let now = Date(millisecondsSince1970: 1_750_000_000_000)

    @Test(arguments: StoreKind.allCases)
    func countersAccumulateUntilTheyExpire(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let window = Self.now.addingTimeInterval(60)
            #expect(try await store.incrementCounter("rate:1.2.3.4", by: 1, expiresAt: window, now: Self.now) == 1)
            #expect(try await store.incrementCounter("rate:1.2.3.4", by: 4, expiresAt: window, now: Self.now) == 5)
            #expect(try await store.counterValue("rate:1.2.3.4", now: Self.now.addingTimeInterval(59)) == 5)
            #expect(try await store.counterValue("rate:1.2.3.4", now: window) == 0)
            #expect(try await store.counterValue("missing", now: Self.now) == 0)
            // Past its expiry a counter starts again, with the new window.
            let next = window.addingTimeInterval(60)
            #expect(try await store.incrementCounter("rate:1.2.3.4", by: 2, expiresAt: next, now: window) == 2)
            #expect(try await store.counterValue("rate:1.2.3.4", now: window.addingTimeInterval(1)) == 2)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aGroupOfIncrementsCountsEachNameOnce(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let window = Self.now.addingTimeInterval(60)
            _ = try await store.incrementCounter("a", by: 5, expiresAt: window, now: Self.now)
            try await store.incrementCounters(["a", "b", "c", "b"], by: 1, expiresAt: window, now: Self.now)
            #expect(try await store.counterValue("a", now: Self.now) == 6)
            #expect(try await store.counterValue("b", now: Self.now) == 2)
            #expect(try await store.counterValue("c", now: Self.now) == 1)
            #expect(try await store.counterValue("c", now: window) == 0)
            try await store.incrementCounters([], by: 1, expiresAt: nil, now: Self.now)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aGroupAddsEachCounterItsOwnAmount(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.incrementCounter("total", by: 10, expiresAt: nil, now: Self.now)
            try await store.incrementCounters(["total": 7, "success": 5, "failure": -2, "zero": 0], expiresAt: nil, now: Self.now)
            try await store.incrementCounters(["total": 1], expiresAt: nil, now: Self.now)
            let values = try await store.counterValues(["total", "success", "failure", "zero"], now: Self.now)
            #expect(values == ["total": 18, "success": 5, "failure": -2, "zero": 0])
            try await store.incrementCounters([String: Int64](), expiresAt: nil, now: Self.now)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aLargeGroupRestartsExpiredCountersAndKeepsLiveOnes(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let soon = Self.now.addingTimeInterval(1)
            let later = Self.now.addingTimeInterval(60)
            _ = try await store.incrementCounter("expired", by: 7, expiresAt: soon, now: Self.now)
            _ = try await store.incrementCounter("live", by: 7, expiresAt: later, now: Self.now)
            let names = ["expired", "live"] + (0..<1_200).map { "group-\($0)" } + ["group-1199", "live"]
            let afterwards = Self.now.addingTimeInterval(2)
            try await store.incrementCounters(names, by: 1, expiresAt: afterwards.addingTimeInterval(60), now: afterwards)
            let values = try await store.counterValues(["expired", "live", "group-0", "group-600", "group-1199"], now: afterwards)
            #expect(values == ["expired": 1, "live": 9, "group-0": 1, "group-600": 1, "group-1199": 2])
            // The live counter kept its own expiry; the restarted one took the new window.
            #expect(try await store.counterValue("live", now: later) == 0)
            #expect(try await store.counterValue("expired", now: later) == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func manyCountersAreReadInOneGo(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.incrementCounter("live", by: 3, expiresAt: Self.now.addingTimeInterval(60), now: Self.now)
            _ = try await store.incrementCounter("forever", by: 1, expiresAt: nil, now: Self.now)
            _ = try await store.incrementCounter("stale", by: 1, expiresAt: Self.now.addingTimeInterval(1), now: Self.now)
            let names = ["live", "forever", "stale", "absent", "live"] + (0..<600).map { "filler-\($0)" }
            let values = try await store.counterValues(names, now: Self.now.addingTimeInterval(2))
            #expect(values == ["live": 3, "forever": 1])
            #expect(try await store.counterValues([], now: Self.now).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func countersWithoutExpiryLast(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.incrementCounter("total", by: 3, expiresAt: nil, now: Self.now) == 3)
            #expect(try await store.counterValue("total", now: Self.now.addingTimeInterval(1e9)) == 3)
            #expect(try await store.purgeExpiredCounters(now: Self.now.addingTimeInterval(1e9)) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentIncrementsFromTwoInstancesAreAllCounted(kind: StoreKind) async throws {
        try await withStores(kind, count: 2) { stores async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<100 {
                    let store = stores[n % 2]
                    group.addTask { _ = try await store.incrementCounter("shared", by: 1, expiresAt: nil, now: Self.now) }
                }
                try await group.waitForAll()
            }
            #expect(try await stores[1].counterValue("shared", now: Self.now) == 100)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func purgeDeletesOnlyExpiredCounters(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.incrementCounter("old", by: 1, expiresAt: Self.now.addingTimeInterval(1), now: Self.now)
            _ = try await store.incrementCounter("new", by: 1, expiresAt: Self.now.addingTimeInterval(100), now: Self.now)
            #expect(try await store.purgeExpiredCounters(now: Self.now.addingTimeInterval(10)) == 1)
            #expect(try await store.counterValue("new", now: Self.now.addingTimeInterval(10)) == 1)
        }
    }
}
