import Foundation
import NIOCore
import NIOPosix
import PushgateStore
@testable import PushgateStoreSQLite
import SQLiteNIO
import Synchronization
import Testing

/// The embedded store's own SQLite connection: values round-trip as SQLite stores them, kept statements
/// stay correct after a failure and past the cache's size, and a second connection on the file sees
/// what the first wrote.
@Suite("SQLite statement connection")
struct SQLiteStatementConnectionTests {
    static func withDatabase(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("test.sqlite").path)
    }

    @Test func everyKindOfValueRoundTrips() async throws {
        try await Self.withDatabase { path in
            let connection = try await SQLiteStatementConnection.open(path: path)
            _ = try await connection.query("CREATE TABLE t (i INTEGER, f REAL, s TEXT, b BLOB, n TEXT)", [])
            let rows: [[SQLiteData]] = [
                [.integer(Int.max), .float(1.5), .text("Grüße \u{1F600}"), .blob(ByteBuffer(bytes: [0, 1, 255])), .null],
                [.integer(Int.min), .float(-0.25), .text(""), .blob(ByteBuffer()), .null],
            ]
            for row in rows {
                _ = try await connection.query("INSERT INTO t VALUES (?, ?, ?, ?, ?)", row)
            }
            let read = try await connection.query("SELECT i, f, s, b, n, typeof(s), typeof(b) FROM t ORDER BY rowid", [])
            #expect(read.count == 2)
            #expect(read.map { Array($0.prefix(5)) } == rows)
            #expect(read[1][5] == .text("text") && read[1][6] == .text("blob"), "an empty text or blob is not NULL")
            await connection.close()
        }
    }

    @Test func aKeptStatementWorksAgainAfterItFailed() async throws {
        try await Self.withDatabase { path in
            let connection = try await SQLiteStatementConnection.open(path: path)
            _ = try await connection.query("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)", [])
            let insert = "INSERT INTO t (id, v) VALUES (?, ?) RETURNING id"
            #expect(try await connection.query(insert, [.integer(1), .text("a")]) == [[.integer(1)]])
            await #expect(throws: SQLiteStatementConnection.Failure.self) {
                _ = try await connection.query(insert, [.integer(1), .text("again")])
            }
            await #expect(throws: SQLiteStatementConnection.Failure.self) {
                _ = try await connection.query(insert, [.integer(2)])
            }
            #expect(try await connection.query(insert, [.integer(2), .text("b")]) == [[.integer(2)]])
            // More distinct statements than the cache keeps, each run twice.
            for round in 0..<2 {
                for column in 0..<(SQLiteStatementConnection.cacheCapacity + 5) {
                    let rows = try await connection.query("SELECT v, \(column) FROM t WHERE id = ?", [.integer(2)])
                    #expect(rows == [[.text("b"), .integer(column)]], "round \(round)")
                }
            }
            await connection.close()
            await #expect(throws: (any Error).self) { _ = try await connection.query("SELECT 1", []) }
        }
    }

    /// The outbox claim binds its LIMITs (the claim's and each app's share); SQLite would prepare the kept statement again whenever that value
    /// moved between 0 or 1 and anything else, unless the plan is fixed whatever is bound.
    @Test func aKeptStatementIsNotPreparedAgainWhenItsBoundValuesChange() async throws {
        try await Self.withDatabase { path in
            let connection = try await SQLiteStatementConnection.open(path: path)
            for migration in try SQLiteMigrations.plan.pending(after: 0) {
                for statement in migration.statements { _ = try await connection.query(statement, []) }
            }
            for index in 0..<5 {
                _ = try await connection.query(
                    "INSERT INTO outbox (app_id, push_token, payload, not_before, created_at) VALUES (?, ?, ?, ?, ?)",
                    [.text("app"), .text("token-\(index)"), .blob(ByteBuffer(bytes: [1])), .integer(index), .integer(0)]
                )
            }
            var claimed = 0
            for (round, limit) in [1, 3, 1, 0, 2, 1].enumerated() {
                let binds: [SQLiteData] = [
                    .text("me"), .integer(100_000), .integer(1_000 + round), .integer(limit),
                    .integer(StoreStatements.claimShare(limit: limit, lanes: 1)),
                ]
                let rows = try await connection.query(SQLiteMigrations.claimDue, binds)
                #expect(rows.count == min(limit, 5 - claimed))
                claimed += rows.count
            }
            #expect(claimed == 5)
            #expect(try await connection.repreparations(of: SQLiteMigrations.claimDue) == 0)
            await connection.close()
        }
    }

    @Test func anotherConnectionSeesCommittedWrites() async throws {
        try await Self.withDatabase { path in
            let writer = try await SQLiteStatementConnection.open(path: path)
            _ = try await writer.query("PRAGMA journal_mode = WAL", [])
            _ = try await writer.query("CREATE TABLE t (v INTEGER)", [])
            let reader = try await SQLiteStatementConnection.open(path: path)
            for value in 1...3 {
                _ = try await writer.query("INSERT INTO t VALUES (?)", [.integer(value)])
                #expect(try await reader.query("SELECT sum(v) FROM t", []) == [[.integer((1...value).reduce(0, +))]])
            }
            // A long statement (not kept) runs like any other.
            let many = (0..<400).map { _ in "(?)" }.joined(separator: ", ")
            _ = try await writer.query("INSERT INTO t VALUES " + many, (0..<400).map { _ in .integer(1) })
            #expect(try await reader.query("SELECT count(*) FROM t", []) == [[.integer(403)]])
            await reader.close()
            await writer.close()
        }
    }

    /// A call made after the thread pool stopped fails at once instead of waiting for a thread.
    @Test func aCallAfterThePoolStoppedFails() async throws {
        try await Self.withDatabase { path in
            let pool = NIOThreadPool(numberOfThreads: 1)
            pool.start()
            let connection = try await SQLiteStatementConnection.open(path: path, threadPool: pool)
            #expect(try await connection.query("SELECT 1", []) == [[.integer(1)]])
            try await pool.shutdownGracefully()
            await #expect(throws: NIOThreadPoolError.ThreadPoolInactive.self) { _ = try await connection.query("SELECT 2", []) }
            await #expect(throws: NIOThreadPoolError.ThreadPoolInactive.self) { _ = try await connection.runDeferringSync("SELECT 3", []) }
        }
    }

    /// Two slow reads on one connection and a write on another, on a pool of two threads: the second read
    /// waits for the first without taking the pool's other thread, so the write runs at once. (With both
    /// reads on the pool, the second held a thread blocked on the connection's lock and the write waited
    /// for the first read to end.)
    @Test func callsWaitingForTheirConnectionLeaveThePoolToOtherConnections() async throws {
        try await Self.withDatabase { path in
            let pool = NIOThreadPool(numberOfThreads: 2)
            pool.start()
            let writer = try await SQLiteStatementConnection.open(path: path, threadPool: pool)
            _ = try await writer.query("PRAGMA journal_mode = WAL", [])
            _ = try await writer.query("CREATE TABLE t (v INTEGER)", [])
            let reader = try await SQLiteStatementConnection.open(path: path, threadPool: pool)
            // About a second of work for SQLite on this machine.
            let slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 4000000) SELECT count(*) FROM c"
            final class Finished: Sendable { let order = Mutex<[String]>([]) }
            let finished = Finished()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        _ = try await reader.query(slow, [])
                        finished.order.withLock { $0.append("read") }
                    }
                }
                // Both reads have asked for a thread by now (on a busy machine this may not hold, and the
                // write then comes first for that reason too).
                try await Task.sleep(for: .milliseconds(200))
                group.addTask {
                    _ = try await writer.query("INSERT INTO t VALUES (1)", [])
                    finished.order.withLock { $0.append("write") }
                }
                try await group.waitForAll()
            }
            #expect(finished.order.withLock { $0 } == ["write", "read", "read"])
            await reader.close()
            await writer.close()
            try await pool.shutdownGracefully()
        }
    }
}
