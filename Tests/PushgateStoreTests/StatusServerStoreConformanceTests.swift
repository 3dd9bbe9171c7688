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

    /// A fresh attempt's claim.
    static func claim() -> [UInt8] { (0..<16).map { _ in UInt8.random(in: 0...255) } }

    @Test(arguments: StoreKind.allCases)
    func seenIDsAreTakenOnceAndPrunedByAge(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let old = Date(millisecondsSince1970: 1_700_000_000_000)
            let new = Date(millisecondsSince1970: 1_700_000_100_000)
            #expect(try await store.markStatusMessageSeen([1, 2], claim: Self.claim(), seenAt: old))
            #expect(try await !store.markStatusMessageSeen([1, 2], claim: Self.claim(), seenAt: new))
            #expect(try await store.markStatusMessageSeen([3], claim: Self.claim(), seenAt: new))
            let firsts = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { try await store.markStatusMessageSeen([9, 9], claim: Self.claim(), seenAt: new) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(firsts == 1)
            #expect(try await store.pruneStatusMessagesSeen(before: Date(millisecondsSince1970: 1_700_000_050_000)) == 1)
            #expect(try await store.markStatusMessageSeen([1, 2], claim: Self.claim(), seenAt: new), "a pruned id is new again")
            #expect(try await !store.markStatusMessageSeen([3], claim: Self.claim(), seenAt: new))
        }
    }

    /// An attempt whose write reached the store but whose answer was lost writes again with its claim: it
    /// still takes the id, and no other attempt does.
    @Test(arguments: StoreKind.allCases)
    func aRepeatedMarkWithItsClaimTakesTheIDAgainAndNoOtherDoes(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let now = Date(millisecondsSince1970: 1_700_000_000_000)
            let mine = Self.claim()
            #expect(try await store.markStatusMessageSeen([5, 5], claim: mine, seenAt: now))
            #expect(try await store.markStatusMessageSeen([5, 5], claim: mine, seenAt: now.addingTimeInterval(1)))
            #expect(try await !store.markStatusMessageSeen([5, 5], claim: Self.claim(), seenAt: now))
            // Concurrent repeats of one attempt all take the id; concurrent other attempts none.
            let results = try await withThrowingTaskGroup(of: (Bool, Bool).self) { group in
                for index in 0..<20 {
                    let repeated = index % 2 == 0
                    group.addTask { (repeated, try await store.markStatusMessageSeen([5, 5], claim: repeated ? mine : Self.claim(), seenAt: now)) }
                }
                return try await group.reduce(into: [(Bool, Bool)]()) { $0.append($1) }
            }
            #expect(results.allSatisfy { repeated, taken in repeated == taken })
            // The claim does not move the time: the id is pruned by its first record.
            #expect(try await store.pruneStatusMessagesSeen(before: now.addingTimeInterval(0.5)) == 1)
        }
    }

    /// Ids recorded before claims existed (migration 4) belong to no attempt.
    @Test(arguments: StoreKind.allCases)
    func anIDRecordedWithoutAClaimIsNobodysToTake(kind: StoreKind) async throws {
        let database = try await TestDatabase.make(kind)
        try await withStores(kind, on: database) { _ async throws in }
        let literal = kind == .sqlite ? "x'0606'" : "'\\x0606'::bytea"
        try await database.execute("INSERT INTO status_seen (id, seen_at) VALUES (\(literal), 1700000000000)")
        try await withStores(kind, on: database) { stores async throws in
            #expect(try await !stores[0].markStatusMessageSeen([6, 6], claim: Self.claim(), seenAt: Date()))
            #expect(try await !stores[0].markStatusMessageSeen([6, 6], claim: [], seenAt: Date()))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func manyConcurrentMarksEachLearnWhetherTheirOwnIDWasNew(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let now = Date(millisecondsSince1970: 1_700_000_000_000)
            #expect(try await store.markStatusMessageSeen([7, 0], claim: Self.claim(), seenAt: now))
            // 300 calls at once: 99 distinct new ids, each three times, and the id already seen.
            let results = try await withThrowingTaskGroup(of: ([UInt8], Bool).self) { group in
                for index in 0..<300 {
                    let id: [UInt8] = index % 100 == 0 ? [7, 0] : [8, UInt8(index % 100)]
                    group.addTask { (id, try await store.markStatusMessageSeen(id, claim: Self.claim(), seenAt: now)) }
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
