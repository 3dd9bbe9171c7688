import Foundation
import PushgateCore
import PushgateStore
import Testing

@Suite("InvalidTokenStore conformance")
struct InvalidTokenStoreConformanceTests {
    static let now = Date(millisecondsSince1970: 1_750_000_000_000)

    /// Records tokens `t0`, `t1`, … of app `a`, token `tN` at `now` + N seconds.
    static func recordTokens(_ count: Int, in store: any PushStore) async throws {
        for n in 0..<count {
            try await store.recordInvalidToken(
                InvalidTokenRecord(appID: "a", pushToken: "t\(n)", reason: "410", recordedAt: Self.now.addingTimeInterval(Double(n)))
            )
        }
    }

    @Test(arguments: StoreKind.allCases)
    func recordsAreKeptPerAppAndTokenAndRefreshed(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let first = InvalidTokenRecord(appID: "app.ios", pushToken: "tok", reason: "BadDeviceToken", recordedAt: Self.now)
            try await store.recordInvalidToken(first)
            #expect(try await store.invalidToken(appID: "app.ios", pushToken: "tok") == first)
            #expect(try await store.invalidToken(appID: "app.android", pushToken: "tok") == nil)
            let later = InvalidTokenRecord(appID: "app.ios", pushToken: "tok", reason: "Unregistered", recordedAt: Self.now.addingTimeInterval(5))
            try await store.recordInvalidToken(later)
            #expect(try await store.invalidToken(appID: "app.ios", pushToken: "tok") == later)
            #expect(try await store.clearInvalidToken(appID: "app.ios", pushToken: "tok"))
            #expect(try await !store.clearInvalidToken(appID: "app.ios", pushToken: "tok"))
            #expect(try await store.invalidToken(appID: "app.ios", pushToken: "tok") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func recordsAreListedSinceATimeOldestFirst(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await Self.recordTokens(5, in: store)
            let listed = try await store.invalidTokens(since: Self.now.addingTimeInterval(1), limit: 3)
            #expect(listed.map(\.pushToken) == ["t1", "t2", "t3"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func recordsBeforeACutoffArePurged(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await Self.recordTokens(4, in: store)
            #expect(try await store.purgeInvalidTokens(recordedBefore: Self.now.addingTimeInterval(2)) == 2)
            #expect(try await store.invalidTokens(since: .distantPast, limit: 10).map(\.pushToken) == ["t2", "t3"])
            #expect(try await store.purgeInvalidTokens(recordedBefore: Self.now.addingTimeInterval(2)) == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentRecordsAndRemovalsEachTakeEffect(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            // Token n has n % 3 registrations (of different devices); each is reported invalid at once.
            for n in 0..<40 {
                for copy in 0..<(n % 3) {
                    try await store.saveDevice(DeviceStoreConformanceTests.device("d\(n)-\(copy)", token: "t\(n)", app: "a"))
                }
            }
            let removed = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for n in 0..<40 {
                    group.addTask {
                        try await store.recordInvalidToken(
                            InvalidTokenRecord(appID: "a", pushToken: "t\(n)", reason: "reason \(n)", recordedAt: Self.now.addingTimeInterval(Double(n)))
                        )
                        return (n, try await store.deleteDevices(appID: "a", pushToken: "t\(n)"))
                    }
                }
                var removed: [Int: Int] = [:]
                for try await (n, count) in group { removed[n] = count }
                return removed
            }
            #expect(removed == Dictionary(uniqueKeysWithValues: (0..<40).map { ($0, $0 % 3) }))
            for n in 0..<40 {
                #expect(try await store.invalidToken(appID: "a", pushToken: "t\(n)")?.reason == "reason \(n)")
            }
            #expect(try await store.deviceCount(namespace: "nextcloud") == 0)
        }
    }
}
