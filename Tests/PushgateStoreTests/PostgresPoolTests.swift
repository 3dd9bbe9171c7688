import Foundation
import PostgresNIO
import PushgateStore
@testable import PushgateStorePostgres
import Testing

/// The PostgreSQL store's connection pool: connections it opened for a burst are closed once unused for
/// the idle timeout, and it starts no keep-alive timers (whose memory outlived every return of a
/// connection to the pool).
@Suite struct PostgresPoolTests {
    @Test func thePoolHasNoKeepAliveQueryAndClosesConnectionsAfterTheIdleTimeout() {
        let configuration = PostgresStoreConfiguration(
            host: "db.example", username: "pushgate", password: nil, database: "pushgate", maximumConnections: 7,
            idleTimeout: .seconds(3)
        )
        let client = PostgresStore.clientConfiguration(configuration)
        #expect(client.options.keepAliveBehavior == nil)
        #expect(client.options.connectionIdleTimeout == .seconds(3))
        #expect(client.options.minimumConnections == 0)
        #expect(client.options.maximumConnections == 7)
        let defaults = PostgresStoreConfiguration(host: "db.example", username: "pushgate", password: nil, database: "pushgate")
        #expect(defaults.idleTimeout == .seconds(10))
    }

    @Test func connectionsOpenedForABurstCloseOnceIdle() async throws {
        let made = try await TestDatabase.make(.postgres)
        var quickToClose = made.postgres!
        quickToClose.idleTimeout = .seconds(2)
        let configuration = quickToClose
        let database = TestDatabase(kind: .postgres, sqlitePath: nil, postgres: configuration)
        try await withStores(.postgres, on: database) { stores in
            let store = stores[0]
            // One connection of the test's own asks throughout (it does not count itself).
            let probe = try await PostgresTestServer(configuration: configuration).connect()
            do {
                // Calls at once, so the pool opens more than one connection.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<8 {
                        group.addTask { _ = try await store.pendingCount() }
                    }
                    try await group.waitForAll()
                }
                #expect(try await Self.otherConnections(probe) >= 1)
                // Closed within the idle timeout and the pool's reaction to it; bounded generously for a
                // busy machine, and far below postgres-nio's own default of 60 s.
                let giveUp = ContinuousClock.now + .seconds(15)
                var open = try await Self.otherConnections(probe)
                while open > 0, ContinuousClock.now < giveUp {
                    try await Task.sleep(for: .milliseconds(200))
                    open = try await Self.otherConnections(probe)
                }
                #expect(open == 0)
            } catch {
                try? await probe.close()
                throw error
            }
            try await probe.close()
        }
    }

    /// The connections to `probe`'s database other than `probe`.
    private static func otherConnections(_ probe: PostgresConnection) async throws -> Int {
        let rows = try await probe.query(
            "SELECT count(*)::bigint FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
            logger: TestDatabase.logger
        )
        var count = 0
        for try await value in rows.decode(Int64.self) { count = Int(value) }
        return count
    }
}
