import Foundation
import PushgateCore
import PushgateStore
import Testing

@Suite("InvalidTokenStore conformance")
struct InvalidTokenStoreConformanceTests {
    static let now = Date(millisecondsSince1970: 1_750_000_000_000)

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
            for n in 0..<5 {
                try await store.recordInvalidToken(
                    InvalidTokenRecord(appID: "a", pushToken: "t\(n)", reason: "410", recordedAt: Self.now.addingTimeInterval(Double(n)))
                )
            }
            let listed = try await store.invalidTokens(since: Self.now.addingTimeInterval(1), limit: 3)
            #expect(listed.map(\.pushToken) == ["t1", "t2", "t3"])
        }
    }
}
