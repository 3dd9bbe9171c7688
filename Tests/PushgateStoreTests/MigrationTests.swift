import Foundation
import PushgateCore
import PushgateStore
import Testing

@Suite("Migrations")
struct MigrationTests {
    @Test(arguments: StoreKind.allCases)
    func instancesStartingTogetherMigrateOnce(kind: StoreKind) async throws {
        // Four instances open the same new database at once; each must find a usable schema.
        try await withStores(kind, count: 4) { stores async throws in
            for store in stores {
                #expect(try await store.deviceCount(namespace: "x") == 0)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDatabaseFromANewerPushgateIsRefused(kind: StoreKind) async throws {
        let database = try await TestDatabase.make(kind)
        try await withStores(kind, on: database) { _ async throws in }
        try await database.execute("INSERT INTO pushgate_migrations (version, name, applied_at) VALUES (999, 'future', 0)")
        await #expect {
            _ = try await database.open()
        } throws: { error in
            (error as? StoreError)?.isSameKind(as: .schemaTooNew("")) == true
        }
    }

    @Test func planRejectsNothingValidAndComputesPendingSteps() throws {
        let plan = MigrationPlan([
            Migration(version: 1, name: "one", statements: ["A"]),
            Migration(version: 2, name: "two", statements: ["B"]),
        ])
        #expect(try plan.pending(after: 0).map(\.version) == [1, 2])
        #expect(try plan.pending(after: 1).map(\.version) == [2])
        #expect(try plan.pending(after: 2).isEmpty)
        #expect(throws: StoreError.self) { try plan.pending(after: 3) }
    }

    /// SQLite numbers `$n` parameters by first appearance; the shared statements must name them in order.
    @Test func sharedStatementsNameTheirParametersInOrder() throws {
        let statements = [
            StoreStatements.upsertDevice, StoreStatements.insertDeviceIfAbsent, StoreStatements.selectDevice,
            StoreStatements.deleteDevice, StoreStatements.deleteDevicesByToken, StoreStatements.countDevices,
            StoreStatements.completeOutboxEntry, StoreStatements.rescheduleOutboxEntries(count: 1), StoreStatements.rescheduleOutboxEntries(count: 3),
            StoreStatements.incrementCounter,
            StoreStatements.selectCounter, StoreStatements.purgeCounters, StoreStatements.recordMigration,
            StoreStatements.upsertInvalidToken, StoreStatements.selectInvalidToken, StoreStatements.deleteInvalidToken,
            StoreStatements.selectInvalidTokensSince,
        ]
        let pattern = try Regex(#"\$([0-9]+)"#)
        for statement in statements {
            var seen: [Int] = []
            for match in statement.matches(of: pattern) {
                let number = Int(statement[match.range].dropFirst())!
                if !seen.contains(number) { seen.append(number) }
            }
            #expect(seen == Array(0..<seen.count).map { $0 + 1 }, "\(statement)")
        }
    }
}
