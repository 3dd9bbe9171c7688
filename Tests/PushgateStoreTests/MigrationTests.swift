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

    /// Takes a database back to version 8: no instances table (10), no index of the counts by minute (9).
    static func undoInstancesAndMinuteIndex(on database: TestDatabase) async throws {
        try await database.execute("DROP TABLE instances")
        try await database.execute("DELETE FROM pushgate_migrations WHERE version = 10")
        try await database.execute("DROP INDEX delivery_counts_by_minute")
        try await database.execute("DELETE FROM pushgate_migrations WHERE version = 9")
    }

    /// Takes a database back to version 7: no delivery counts.
    static func undoDeliveryCounts(on database: TestDatabase) async throws {
        try await Self.undoInstancesAndMinuteIndex(on: database)
        try await database.execute("DROP TABLE delivery_counts")
        try await database.execute("DROP TABLE delivery_counts_hourly")
        try await database.execute("DELETE FROM pushgate_migrations WHERE version = 8")
    }

    /// Takes a database back to version 6: an outbox without front ends, its claims shared by app.
    static func undoClaimsByLane(on database: TestDatabase) async throws {
        try await Self.undoDeliveryCounts(on: database)
        try await database.execute("DROP INDEX outbox_due_by_lane")
        try await database.execute("ALTER TABLE outbox DROP COLUMN front_end")
        try await database.execute("CREATE INDEX outbox_due_by_app ON outbox (app_id, not_before, id)")
        try await database.execute("DELETE FROM pushgate_migrations WHERE version = 7")
    }

    /// Takes a database back to version 5: the outbox indexed by due time alone.
    static func undoClaimsAppByApp(on database: TestDatabase) async throws {
        try await Self.undoClaimsByLane(on: database)
        try await database.execute("DROP INDEX outbox_due_by_app")
        try await database.execute("DELETE FROM pushgate_migrations WHERE version = 6")
    }

    /// Entries a version 6 outbox holds (no front end recorded) are claimed after the upgrade with the
    /// empty front end, as one lane of their app: a front end's entry queued after the upgrade shares
    /// the app's claims with them, and they all drain.
    @Test(arguments: StoreKind.allCases)
    func entriesFromBeforeFrontEndsWereRecordedDrainAsALaneOfTheirApp(kind: StoreKind) async throws {
        let database = try await TestDatabase.make(kind)
        try await withStores(kind, on: database) { _ async throws in }
        try await Self.undoClaimsByLane(on: database)
        let payload = kind == .sqlite ? "X'7B7D'" : "'\\x7b7d'::bytea"
        let rows = (0..<20).map { "('app', 'old-\($0)', \(payload), \($0), 0)" }.joined(separator: ", ")
        try await database.execute("INSERT INTO outbox (app_id, push_token, payload, not_before, created_at) VALUES \(rows)")
        try await withStores(kind, on: database) { stores async throws in
            let store = stores[0]
            _ = try await store.enqueue([OutboxMessage(appID: "app", frontEnd: "nextcloud", pushToken: "new", payload: [1], notBefore: Date())])
            let first = try await store.claimDue(now: Date(), limit: 2, leaseFor: .seconds(30), owner: "w")
            #expect(first.map(\.message.pushTokens) == [["old-0"], ["new"]])
            #expect(first.map(\.message.frontEnd) == ["", "nextcloud"])
            let rest = try await store.claimDue(now: Date(), limit: 100, leaseFor: .seconds(30), owner: "w")
            #expect(rest.map(\.message.pushTokens) == (1..<20).map { ["old-\($0)"] })
            #expect(rest.allSatisfy { $0.message.frontEnd == "" && $0.message.payload == Array("{}".utf8) })
            #expect(try await store.complete(ids: first.map(\.id) + rest.map(\.id), owner: "w") == 21)
            #expect(try await store.pendingCount() == 0)
        }
        // The upgrade made the lanes' index (dropping it fails otherwise).
        try await Self.undoClaimsByLane(on: database)
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
            StoreStatements.claimDueOutboxEntries(.sqlite), StoreStatements.claimDueOutboxEntries(.postgres), StoreStatements.countOutboxLanes(.sqlite), StoreStatements.countOutboxLanes(.postgres),
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
