import Foundation
import PushgateStore
import Testing

@Suite("InstanceStore conformance")
struct InstanceStoreConformanceTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(_ name: String, seenSecondsAgo: TimeInterval, version: String = "1.0") -> InstanceRecord {
        InstanceRecord(name: name, lastSeen: Self.now.addingTimeInterval(-seenSecondsAgo), version: version, started: Self.now.addingTimeInterval(-3600))
    }

    /// A heartbeat replaces the instance's row; the recent ones are listed by name.
    @Test(arguments: StoreKind.allCases)
    func recentHeartbeatsAreListedByName(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await store.recordInstance(Self.record("b", seenSecondsAgo: 90, version: "0.9"))
            try await store.recordInstance(Self.record("a", seenSecondsAgo: 30))
            try await store.recordInstance(Self.record("c", seenSecondsAgo: 120))
            // b beats again, newer.
            try await store.recordInstance(Self.record("b", seenSecondsAgo: 5, version: "1.0"))
            let seen = try await store.instances(seenSince: Self.now.addingTimeInterval(-60))
            #expect(seen == [Self.record("a", seenSecondsAgo: 30), Self.record("b", seenSecondsAgo: 5)])
            #expect(try await store.instances(seenSince: Self.now.addingTimeInterval(-3600)).map(\.name) == ["a", "b", "c"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func instancesGoneForLongArePurged(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await store.recordInstance(Self.record("old", seenSecondsAgo: 90_000))
            try await store.recordInstance(Self.record("new", seenSecondsAgo: 10))
            #expect(try await store.purgeInstances(seenBefore: Self.now.addingTimeInterval(-86_400)) == 1)
            #expect(try await store.purgeInstances(seenBefore: Self.now.addingTimeInterval(-86_400)) == 0)
            #expect(try await store.instances(seenSince: .distantPast).map(\.name) == ["new"])
        }
    }

    /// Two instances on one database see each other.
    @Test(arguments: StoreKind.allCases)
    func instancesOnOneDatabaseSeeEachOther(kind: StoreKind) async throws {
        try await withStores(kind, count: 2) { stores async throws in
            try await stores[0].recordInstance(Self.record("first", seenSecondsAgo: 1))
            try await stores[1].recordInstance(Self.record("second", seenSecondsAgo: 2))
            for store in stores {
                #expect(try await store.instances(seenSince: Self.now.addingTimeInterval(-60)).map(\.name) == ["first", "second"])
            }
        }
    }
}
