import Foundation
import PushgateCore
import PushgateStore
import PushgateStorePostgres
import Testing

/// What PostgreSQL and postgres-nio report reaches callers as a ``StoreError`` that names the failure
/// (SQLSTATE, table, column, constraint) and never the row's values: the server's `detail` of a refused
/// row lists them all ("Failing row contains (…)"), and these messages reach logs and `/health`.
@Suite struct PostgresStoreErrorTests {
    static let token = "5ec4e7c0ffee5ec4e7c0ffee5ec4e7c0"

    static func device(_ id: String, token: String = Self.token) -> DeviceRegistration {
        let now = Date(millisecondsSince1970: 1_700_000_000_000)
        return DeviceRegistration(
            namespace: "errors", deviceID: id, appID: "im.example.ios", pushToken: token, publicKey: "pk-\(token)",
            createdAt: now, updatedAt: now
        )
    }

    /// Runs `body` with a bounded store (as the gateway hands out) on a fresh PostgreSQL database after
    /// `sql` has changed its schema.
    private func withStore(after sql: [String], _ body: @Sendable (BoundedStore) async throws -> Void) async throws {
        let database = try await TestDatabase.make(.postgres)
        try await withStores(.postgres, on: database) { stores in
            for statement in sql { try await database.execute(statement) }
            try await body(BoundedStore(stores[0], timeout: .seconds(30)))
        }
    }

    private static func storeError(_ call: () async throws -> Void) async -> StoreError? {
        do {
            try await call()
            return nil
        } catch let error as StoreError {
            return error
        } catch {
            Issue.record("not a StoreError: \(type(of: error))")
            return nil
        }
    }

    @Test func aRefusedRowIsReportedByItsConstraintAndNotItsValues() async throws {
        try await self.withStore(after: ["ALTER TABLE devices ADD CONSTRAINT no_such_token CHECK (push_token <> '\(Self.token)')"]) { store in
            // One statement (saveDevice) and a transaction (saveDevices: postgres-nio wraps its error).
            let single = await Self.storeError { try await store.saveDevice(Self.device("d1")) }
            let batch = await Self.storeError { try await store.saveDevices([Self.device("d2", token: "fine"), Self.device("d3")]) }
            for error in [single, batch] {
                let error = try #require(error)
                #expect(error.isSameKind(as: .unavailable("")))
                #expect(error.message.contains("SQLSTATE 23514"), "\(error.message)")
                #expect(error.message.contains("constraint no_such_token"), "\(error.message)")
                #expect(!error.message.contains(Self.token), "\(error.message)")
                #expect(!error.message.contains("errors"), "the row's namespace: \(error.message)")
            }
            // The failed writes were recorded for /health in the same words.
            let reason = try #require(store.writes.failure)
            #expect(reason.contains("SQLSTATE 23514") && !reason.contains(Self.token), "\(reason)")
            // The refused transaction wrote nothing; the store goes on.
            #expect(try await store.device(namespace: "errors", deviceID: "d2") == nil)
            try await store.saveDevice(Self.device("d4", token: "fine"))
            #expect(try await store.device(namespace: "errors", deviceID: "d4")?.pushToken == "fine")
        }
    }

    @Test func aColumnThatCannotBeReadIsACorruptRowNamedByItsColumn() async throws {
        let sql = [
            "ALTER TABLE devices ALTER COLUMN created_at TYPE TEXT",
            "INSERT INTO devices VALUES ('errors', 'd1', 'im.example.ios', '\(Self.token)', NULL, '{}', 'x\(Self.token)', 0)",
        ]
        try await self.withStore(after: sql) { store in
            let error = try #require(await Self.storeError { _ = try await store.device(namespace: "errors", deviceID: "d1") })
            #expect(error.isSameKind(as: .corruptRow("")), "\(error.message)")
            #expect(error.message.contains("created_at"), "\(error.message)")
            #expect(!error.message.contains(Self.token), "\(error.message)")
        }
    }
}
