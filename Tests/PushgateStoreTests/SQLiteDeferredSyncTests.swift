import Foundation
import PushgateStore
@testable import PushgateStoreSQLite
import SQLiteNIO
import Testing

/// The SQLite store syncs the write-ahead log on every commit that records something accepted (an outbox
/// entry, a registration) and lets the commits that only record what deliveries found (completions, leases,
/// retries, invalid tokens, seen Status messages, delivery counts) ride on the next synced one.
@Suite("SQLite deferred syncs")
struct SQLiteDeferredSyncTests {
    /// SQLite's numbers for the `synchronous` setting.
    static let normal: Int = 1
    static let full: Int = 2

    static func synchronous(_ store: SQLiteStore) async throws -> Int {
        let rows = try await store.writer.query("PRAGMA synchronous", [])
        return try #require(rows.first?.first?.integer)
    }

    @Test func aDeferredWriteRunsWithoutSyncAndTheWriterSyncsAgainAfterIt() async throws {
        let (store, cleanUp) = try await Self.openStore()
        defer { cleanUp() }
        #expect(try await Self.synchronous(store) == Self.full)
        let during = try await store.writes.run {
            try await SQLiteStore.deferringSync(store.writer) { try await Self.synchronous(store) }
        }
        #expect(during == Self.normal)
        #expect(try await Self.synchronous(store) == Self.full)
        // One statement: the setting changes and comes back within the one call.
        let oneCall = try await store.writer.runDeferringSync("PRAGMA synchronous", [])
        #expect(oneCall.rows.first?.first?.integer == Self.normal)
        #expect(try await Self.synchronous(store) == Self.full)
    }

    @Test func aDeferredWriteThatFailsLeavesTheWriterSyncing() async throws {
        let (store, cleanUp) = try await Self.openStore()
        defer { cleanUp() }
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await store.writes.run {
                try await SQLiteStore.deferringSync(store.writer) { () async throws -> Int in throw Refused() }
            }
        }
        // A statement SQLite refuses fails inside the deferred write too.
        await #expect(throws: (any Error).self) { _ = try await store.runDeferringSync("DELETE FROM no_such_table", []) }
        await #expect(throws: (any Error).self) { _ = try await store.writer.runDeferringSync("DELETE FROM no_such_table", []) }
        #expect(try await Self.synchronous(store) == Self.full)
        _ = try await store.enqueue([OutboxMessage(appID: "app", pushTokens: ["t"], payload: Array("p".utf8), notBefore: Date())])
        #expect(try await store.pendingCount() == 1)
    }

    /// Every write of the delivery path, then an enqueue: the writer is back at synced commits after each.
    @Test func everyKindOfWriteLeavesTheWriterSyncing() async throws {
        let (store, cleanUp) = try await Self.openStore()
        defer { cleanUp() }
        let now = Date()
        let ids = try await store.enqueue(
            (0..<4).map { OutboxMessage(appID: "app", pushTokens: ["token-\($0)"], payload: Array("payload".utf8), notBefore: now) }
        )
        #expect(try await Self.synchronous(store) == Self.full)
        let claimed = try await store.claimDue(now: now, limit: 10, leaseFor: .seconds(30), owner: "worker")
        #expect(claimed.count == 4)
        #expect(try await Self.synchronous(store) == Self.full)
        #expect(try await store.complete(id: ids[0], owner: "worker"))
        #expect(try await Self.synchronous(store) == Self.full)
        #expect(try await store.complete(ids: [ids[1]], owner: "worker") == 1)
        #expect(try await Self.synchronous(store) == Self.full)
        #expect(try await store.reschedule([OutboxRetry(id: ids[2], notBefore: now, error: "later")], owner: "worker") == 1)
        #expect(try await Self.synchronous(store) == Self.full)
        try await store.recordInvalidToken(InvalidTokenRecord(appID: "app", pushToken: "token-3", reason: "gone", recordedAt: now))
        #expect(try await Self.synchronous(store) == Self.full)
        try await store.addDeliveryCounts([DeliveryCount(appID: "app", frontEnd: "gorush", outcome: "delivered", minute: 1, count: 2)])
        #expect(try await Self.synchronous(store) == Self.full)
        #expect(try await store.markStatusMessageSeen(Array("message".utf8), claim: Array("claim".utf8), seenAt: now))
        #expect(try await Self.synchronous(store) == Self.full)
        // What the deferred writes recorded is there for every later reader.
        #expect(try await store.pendingCount() == 2)
        #expect(try await store.invalidToken(appID: "app", pushToken: "token-3") != nil)
        #expect(try await !store.markStatusMessageSeen(Array("message".utf8), claim: Array("other".utf8), seenAt: now))
    }

    static func openStore() async throws -> (SQLiteStore, @Sendable () -> Void) {
        let database = try await TestDatabase.make(.sqlite)
        let path = try #require(database.sqlitePath)
        let store = try #require(try await database.open() as? SQLiteStore)
        let directory = (path as NSString).deletingLastPathComponent
        return (store, { try? FileManager.default.removeItem(atPath: directory) })
    }
}
