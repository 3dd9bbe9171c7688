import Foundation
import PushgateCore
import PushgateStore
import Testing

@Suite("DeviceStore conformance")
struct DeviceStoreConformanceTests {
    static func device(_ id: String, namespace: String = "nextcloud", token: String = "token-1", app: String = "app.fcm") -> DeviceRegistration {
        DeviceRegistration(
            namespace: namespace, deviceID: id, appID: app, pushToken: token,
            publicKey: "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----\n",
            attributes: ["voip_app": "app.voip", "note": "ünïcødé ✓"],
            createdAt: Date(millisecondsSince1970: 1_700_000_000_123), updatedAt: Date(millisecondsSince1970: 1_700_000_000_456)
        )
    }

    @Test(arguments: StoreKind.allCases)
    func savedDeviceReadsBackUnchanged(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let device = Self.device("d1")
            try await store.saveDevice(device)
            #expect(try await store.device(namespace: "nextcloud", deviceID: "d1") == device)
            #expect(try await store.device(namespace: "gorush", deviceID: "d1") == nil)
            #expect(try await store.device(namespace: "nextcloud", deviceID: "d2") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchSaveStoresEveryDeviceAndTheLaterOfTwins(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await store.saveDevice(Self.device("old", token: "before"))
            var batch = (0..<(StoreStatements.upsertDevicesChunkSize * 2 + 7)).map { Self.device("bulk-\($0)", token: "t\($0)") }
            batch.append(Self.device("old", token: "after"))
            batch.append(Self.device("bulk-3", token: "twin-later"))
            try await store.saveDevices(batch)
            #expect(try await store.deviceCount(namespace: "nextcloud") == StoreStatements.upsertDevicesChunkSize * 2 + 8)
            #expect(try await store.device(namespace: "nextcloud", deviceID: "bulk-3")?.pushToken == "twin-later")
            #expect(try await store.device(namespace: "nextcloud", deviceID: "old")?.pushToken == "after")
            #expect(try await store.device(namespace: "nextcloud", deviceID: "bulk-1006") == Self.device("bulk-1006", token: "t1006"))
            try await store.saveDevices([])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func batchLookupFindsExactlyTheStoredIdsOfOneNamespace(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            // More ids than one query takes, so the lookup must split them.
            let stored = (0..<(StoreStatements.selectDevicesChunkSize + 20)).map { "dev-\($0)" }
            for id in stored where Int(id.dropFirst(4))! % 2 == 0 { try await store.saveDevice(Self.device(id)) }
            try await store.saveDevice(Self.device("dev-1", namespace: "gorush"))
            let found = try await store.devices(namespace: "nextcloud", deviceIDs: stored + ["dev-0", "missing"])
            let expected = Set(stored.filter { Int($0.dropFirst(4))! % 2 == 0 })
            #expect(found.count == expected.count)
            #expect(Set(found.map(\.deviceID)) == expected)
            #expect(found.first { $0.deviceID == "dev-0" } == Self.device("dev-0"))
            #expect(try await store.devices(namespace: "nextcloud", deviceIDs: []).isEmpty)
            #expect(try await store.devices(namespace: "gorush", deviceIDs: ["dev-1", "dev-2"]).map(\.deviceID) == ["dev-1"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func saveReplacesButKeepsCreationTime(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await store.saveDevice(Self.device("d1"))
            var changed = Self.device("d1", token: "token-2", app: "app.apns")
            changed.publicKey = nil
            changed.attributes = [:]
            changed.createdAt = Date(millisecondsSince1970: 1_800_000_000_000)
            changed.updatedAt = Date(millisecondsSince1970: 1_800_000_000_000)
            try await store.saveDevice(changed)
            let stored = try #require(try await store.device(namespace: "nextcloud", deviceID: "d1"))
            #expect(stored.pushToken == "token-2")
            #expect(stored.appID == "app.apns")
            #expect(stored.publicKey == nil)
            #expect(stored.attributes.isEmpty)
            #expect(stored.createdAt == Self.device("d1").createdAt)
            #expect(stored.updatedAt == changed.updatedAt)
            #expect(try await store.deviceCount(namespace: "nextcloud") == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func insertIfAbsentNeverOverwrites(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.insertDeviceIfAbsent(Self.device("d1")))
            #expect(try await !store.insertDeviceIfAbsent(Self.device("d1", token: "other")))
            #expect(try await store.device(namespace: "nextcloud", deviceID: "d1")?.pushToken == "token-1")
            #expect(try await store.insertDeviceIfAbsent(Self.device("d1", namespace: "gorush")))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func concurrentInsertsOfOneIdHaveOneWinner(kind: StoreKind) async throws {
        try await withStores(kind, count: 2) { stores async throws in
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for attempt in 0..<20 {
                    let store = stores[attempt % 2]
                    group.addTask { try await store.insertDeviceIfAbsent(Self.device("same", token: "t\(attempt)")) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
            #expect(try await stores[0].deviceCount(namespace: "nextcloud") == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deleteRemovesOnlyTheNamedDevice(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await store.saveDevice(Self.device("d1"))
            try await store.saveDevice(Self.device("d2"))
            #expect(try await store.deleteDevice(namespace: "nextcloud", deviceID: "d1"))
            #expect(try await !store.deleteDevice(namespace: "nextcloud", deviceID: "d1"))
            #expect(try await store.device(namespace: "nextcloud", deviceID: "d1") == nil)
            #expect(try await store.device(namespace: "nextcloud", deviceID: "d2") != nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deleteByTokenRemovesEveryRegistrationOfThatAppAndToken(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            try await store.saveDevice(Self.device("d1", token: "dead"))
            try await store.saveDevice(Self.device("d2", namespace: "gorush", token: "dead"))
            try await store.saveDevice(Self.device("d3", token: "dead", app: "other.app"))
            try await store.saveDevice(Self.device("d4", token: "alive"))
            #expect(try await store.deleteDevices(appID: "app.fcm", pushToken: "dead") == 2)
            #expect(try await store.device(namespace: "nextcloud", deviceID: "d3") != nil)
            #expect(try await store.device(namespace: "nextcloud", deviceID: "d4") != nil)
            #expect(try await store.deleteDevices(appID: "app.fcm", pushToken: "dead") == 0)
            #expect(try await store.deviceCount(namespace: "nextcloud") == 2)
            #expect(try await store.deviceCount(namespace: "gorush") == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func storedDataSurvivesReopening(kind: StoreKind) async throws {
        let database = try await TestDatabase.make(kind)
        try await withStores(kind, on: database) { stores async throws in
            try await stores[0].saveDevice(Self.device("d1"))
        }
        try await withStores(kind, on: database) { stores async throws in
            #expect(try await stores[0].device(namespace: "nextcloud", deviceID: "d1") == Self.device("d1"))
        }
    }
}
