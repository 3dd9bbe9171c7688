import Foundation
import PushgateCore
import PushgateStore
import Testing

@Suite("StatusServerStore conformance")
struct StatusServerStoreConformanceTests {
    static func hash(_ byte: UInt8) -> [UInt8] { Array(repeating: byte, count: 64) }
    static func record(_ byte: UInt8, installation: String = "i-1", version: UInt64 = 1, registration: [UInt8]? = [1, 2, 3]) -> StatusRegistrationRecord {
        StatusRegistrationRecord(publicKeyHash: Self.hash(byte), installationID: installation, version: version, registration: registration)
    }

    @Test(arguments: StoreKind.allCases)
    func registrationsReadBackAndUnregisteredRowsKeepTheirVersion(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.saveStatusRegistration(Self.record(1)))
            #expect(try await store.saveStatusRegistration(Self.record(2, registration: nil)))
            #expect(try await store.statusRegistration(publicKeyHash: Self.hash(1), installationID: "i-1") == Self.record(1))
            #expect(try await store.statusRegistration(publicKeyHash: Self.hash(2), installationID: "i-1") == Self.record(2, registration: nil))
            #expect(try await store.statusRegistration(publicKeyHash: Self.hash(1), installationID: "i-2") == nil)
            #expect(try await store.statusRegistrations(publicKeyHashes: [Self.hash(1), Self.hash(2), Self.hash(3)]) == [Self.record(1)])
            #expect(try await store.statusRegisteredKeyHashes() == [Self.hash(1)])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func onlyAHigherVersionReplacesARow(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.saveStatusRegistration(Self.record(1, version: 5)))
            #expect(try await !store.saveStatusRegistration(Self.record(1, version: 5, registration: [9])))
            #expect(try await !store.saveStatusRegistration(Self.record(1, version: 4, registration: [9])))
            #expect(try await store.saveStatusRegistration(Self.record(1, version: 6, registration: [7])))
            #expect(try await store.statusRegistration(publicKeyHash: Self.hash(1), installationID: "i-1") == Self.record(1, version: 6, registration: [7]))
            await #expect(throws: StoreError.self) { try await store.saveStatusRegistration(Self.record(1, version: UInt64.max)) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func racingSavesOfOneVersionStoreItOnce(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let saved = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<10 { group.addTask { try await store.saveStatusRegistration(Self.record(1, version: 3, registration: [UInt8(index)])) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(saved == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func manyKeyHashesAreReadInOneCall(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            for byte in UInt8(0)..<20 { _ = try await store.saveStatusRegistration(Self.record(byte)) }
            let asked = (0..<1_000).map { index in Self.hash(UInt8(index % 40)) }
            let found = try await store.statusRegistrations(publicKeyHashes: asked)
            #expect(Set(found.map(\.publicKeyHash)) == Set((UInt8(0)..<20).map(Self.hash)))
            #expect(try await store.statusRegistrations(publicKeyHashes: []).isEmpty)
            #expect(try await store.statusRegisteredKeyHashes().count == 20)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDeadTokenDropsOnlyTheVersionItCameFrom(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            _ = try await store.saveStatusRegistration(Self.record(1, version: 2))
            #expect(try await !store.dropStatusRegistration(publicKeyHash: Self.hash(1), installationID: "i-1", version: 1))
            #expect(try await store.dropStatusRegistration(publicKeyHash: Self.hash(1), installationID: "i-1", version: 2))
            #expect(try await !store.dropStatusRegistration(publicKeyHash: Self.hash(1), installationID: "i-1", version: 2))
            #expect(try await store.statusRegistration(publicKeyHash: Self.hash(1), installationID: "i-1") == Self.record(1, version: 2, registration: nil))
            #expect(try await store.statusRegisteredKeyHashes().isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func seenIDsAreTakenOnceAndPrunedByAge(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let old = Date(millisecondsSince1970: 1_700_000_000_000)
            let new = Date(millisecondsSince1970: 1_700_000_100_000)
            #expect(try await store.markStatusMessageSeen([1, 2], seenAt: old))
            #expect(try await !store.markStatusMessageSeen([1, 2], seenAt: new))
            #expect(try await store.markStatusMessageSeen([3], seenAt: new))
            let firsts = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { try await store.markStatusMessageSeen([9, 9], seenAt: new) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(firsts == 1)
            #expect(try await store.pruneStatusMessagesSeen(before: Date(millisecondsSince1970: 1_700_000_050_000)) == 1)
            #expect(try await store.markStatusMessageSeen([1, 2], seenAt: new), "a pruned id is new again")
            #expect(try await !store.markStatusMessageSeen([3], seenAt: new))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func manyConcurrentMarksEachLearnWhetherTheirOwnIDWasNew(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let now = Date(millisecondsSince1970: 1_700_000_000_000)
            #expect(try await store.markStatusMessageSeen([7, 0], seenAt: now))
            // 300 calls at once: 99 distinct new ids, each three times, and the id already seen.
            let results = try await withThrowingTaskGroup(of: ([UInt8], Bool).self) { group in
                for index in 0..<300 {
                    let id: [UInt8] = index % 100 == 0 ? [7, 0] : [8, UInt8(index % 100)]
                    group.addTask { (id, try await store.markStatusMessageSeen(id, seenAt: now)) }
                }
                return try await group.reduce(into: [[UInt8]: Int]()) { counts, result in counts[result.0, default: 0] += result.1 ? 1 : 0 }
            }
            #expect(results[[7, 0]] == 0)
            #expect(results.count == 100)
            #expect(results.filter { $0.key != [7, 0] }.allSatisfy { $0.value == 1 }, "each new id is new to exactly one caller")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theIdentityIsSavedOnceAndEveryoneAgrees(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            #expect(try await store.statusIdentity() == nil)
            let results = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for byte in UInt8(1)...8 { group.addTask { try await store.saveStatusIdentityIfAbsent(Array(repeating: byte, count: 32)) } }
                return try await group.reduce(into: Set<[UInt8]>()) { $0.insert($1) }
            }
            #expect(results.count == 1)
            #expect(try await store.statusIdentity() == results.first)
            #expect(try await store.saveStatusIdentityIfAbsent(Array(repeating: 0xee, count: 32)) == results.first)
        }
    }
}
