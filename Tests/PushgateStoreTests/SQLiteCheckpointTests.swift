import Foundation
import PushgateStore
@testable import PushgateStoreSQLite
import Testing

/// The SQLite store copies its write-ahead log into the database file in small steps, so no commit waits
/// for a large copy and the log stays small.
@Suite("SQLite checkpoints")
struct SQLiteCheckpointTests {
    @Test func theWriteAheadLogStaysNearItsCheckpointSize() async throws {
        let database = try await TestDatabase.make(.sqlite)
        let path = try #require(database.sqlitePath)
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try await database.open()
        // About 19 MiB of outbox entries (4,000 rows of about 4.8 KiB), one commit for every ten rows:
        // over four times SQLite's default log size of 1,000 pages.
        let tokens = (0..<100).map { "token-\($0)-" + String(repeating: "x", count: 40) }
        for batch in 0..<400 {
            let messages = (0..<10).map { row in
                OutboxMessage(appID: "app", pushTokens: tokens, payload: Array("payload \(batch)-\(row)".utf8), notBefore: Date())
            }
            _ = try await store.enqueue(messages)
        }
        let logBytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        let pageSize = 4_096
        // The log is reused from its start after each complete checkpoint: it grows to one checkpoint's
        // pages and the last commit's, not to the data written.
        #expect(logBytes > 0)
        #expect(logBytes <= (SQLiteStore.checkpointPages + 64) * pageSize)
        #expect(try await store.pendingCount() == 400_000)
    }
}
