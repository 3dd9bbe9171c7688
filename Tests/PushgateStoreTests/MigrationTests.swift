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

    /// Entries queued before an entry could hold several tokens (schema version 4, one token a row) are
    /// read after the upgrade as entries of their one token.
    @Test(arguments: StoreKind.allCases)
    func entriesFromBeforeSeveralTokensAnEntryKeepTheirToken(kind: StoreKind) async throws {
        let database = try await TestDatabase.make(kind)
        try await withStores(kind, on: database) { _ async throws in }
        // Back to version 4's outbox, with one entry written as version 4 wrote it.
        try await Self.undoClaimsAppByApp(on: database)
        try await database.execute("ALTER TABLE outbox DROP COLUMN more_tokens")
        try await database.execute("ALTER TABLE outbox DROP COLUMN token_count")
        try await database.execute("DELETE FROM pushgate_migrations WHERE version = 5")
        let payload = kind == .sqlite ? "X'7B7D'" : "'\\x7b7d'::bytea"
        try await database.execute(
            "INSERT INTO outbox (app_id, push_token, payload, not_before, created_at) VALUES ('app', 'old-token', \(payload), 0, 0)"
        )
        try await withStores(kind, on: database) { stores async throws in
            let store = stores[0]
            #expect(try await store.pendingCount() == 1)
            let claimed = try await store.claimDue(now: Date(), limit: 10, leaseFor: .seconds(30), owner: "w")
            #expect(claimed.map(\.message.pushTokens) == [["old-token"]])
            #expect(claimed.first?.message.payload == Array("{}".utf8))
        }
    }

    /// Takes a database back to version 5: the outbox indexed by due time alone.
    static func undoClaimsAppByApp(on database: TestDatabase) async throws {
        try await database.execute("DROP INDEX outbox_due_by_app")
        try await database.execute("DELETE FROM pushgate_migrations WHERE version = 6")
    }

    /// A version 5 outbox gets the index of claims shared between apps, and its backlog is shared.
    @Test(arguments: StoreKind.allCases)
    func aBacklogFromBeforeClaimsAppByAppIsSharedAfterTheUpgrade(kind: StoreKind) async throws {
        let database = try await TestDatabase.make(kind)
        try await withStores(kind, on: database) { _ async throws in }
        try await Self.undoClaimsAppByApp(on: database)
        try await withStores(kind, on: database) { stores async throws in
            let now = Date()
            _ = try await stores[0].enqueue((0..<20).map { OutboxMessage(appID: "a", pushToken: "a\($0)", payload: [1], notBefore: now) })
            _ = try await stores[0].enqueue([OutboxMessage(appID: "b", pushToken: "b", payload: [2], notBefore: now)])
        }
        try await withStores(kind, on: database) { stores async throws in
            let claimed = try await stores[0].claimDue(now: Date(), limit: 5, leaseFor: .seconds(30), owner: "w")
            #expect(claimed.count == 5)
            #expect(claimed.contains { $0.message.appID == "b" })
        }
        // The upgrade made the index again (dropping it fails otherwise).
        try await Self.undoClaimsAppByApp(on: database)
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
            StoreStatements.claimDueOutboxEntries(.sqlite), StoreStatements.claimDueOutboxEntries(.postgres), StoreStatements.countOutboxApps,
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
