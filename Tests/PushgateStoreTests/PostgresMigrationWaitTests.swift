import Foundation
import PostgresNIO
import PushgateStore
import PushgateStorePostgres
import Testing

/// A migration at start-up never waits without bound, and never holds up the instances that run on the
/// database: each lock it needs is waited for a moment at a time, for at most `migration_wait` in all.
@Suite("PostgreSQL migrations under locks held elsewhere")
struct PostgresMigrationWaitTests {
    /// The schema's advisory lock ("pushgate"), as an instance that migrates holds it.
    static let advisoryLockKey: Int64 = 0x7075_7368_6761_7465

    static func expectGivesUp(_ configuration: PostgresStoreConfiguration, saying reason: String) async {
        let started = ContinuousClock.now
        await #expect {
            _ = try await PostgresStore.connect(configuration, logger: TestDatabase.logger)
        } throws: { error in
            "\(error)".contains(reason)
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= configuration.migrationWait && waited < .seconds(60), "\(waited)")
    }

    @Test func aMigrationWaitsForLocksHeldElsewhereForItsWaitThenGoesThroughOnceTheyAreFree() async throws {
        guard ProcessInfo.processInfo.environment["PUSHGATE_TEST_POSTGRES_URL"] != nil else { return }
        let database = try await TestDatabase.make(.postgres)
        try await withStores(.postgres, on: database) { _ async throws in }
        // Versions 9 and 10 to apply again: an index of delivery_counts, and the instances table.
        try await MigrationTests.undoInstancesAndMinuteIndex(on: database)
        var configuration = try #require(database.postgres)
        configuration.migrationWait = .seconds(3)
        let other = try await PostgresTestServer(configuration: configuration).connect()

        // Another instance is migrating.
        _ = try await other.query("SELECT pg_advisory_lock(\(Self.advisoryLockKey))", logger: TestDatabase.logger)
        await Self.expectGivesUp(configuration, saying: "another instance is migrating the schema")
        _ = try await other.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: TestDatabase.logger)

        // A running instance's transaction holds the table the new index is built on; its own writes go
        // on while the migration waits (the migration's lock request never stays queued for long).
        _ = try await other.query("BEGIN", logger: TestDatabase.logger)
        _ = try await other.query("LOCK TABLE delivery_counts IN ROW EXCLUSIVE MODE", logger: TestDatabase.logger)
        await Self.expectGivesUp(configuration, saying: "a table it changes is locked by running queries")
        _ = try await other.query("ROLLBACK", logger: TestDatabase.logger)
        try await other.close()

        // Free again: the migration goes through.
        _ = try await PostgresStore.connect(configuration, logger: TestDatabase.logger)
        try await withStores(.postgres, on: database) { stores async throws in
            #expect(try await stores[0].deviceCount(namespace: "x") == 0)
        }
        try await database.execute("SELECT 1 FROM instances LIMIT 1")
    }
}
