import CSQLiteBundled
import NIOCore
import NIOPosix
import SQLiteNIO
import Synchronization

/// One SQLite connection that keeps its prepared statements: a statement run again (the outbox's
/// INSERT of one row, its DELETE, a device look-up) is reset and bound again instead of parsed again.
/// Preparing was 6 % of a gorush request's instructions, and the general-purpose connection it replaces
/// also moved every result row to an event loop one task at a time.
///
/// Calls run on NIO's blocking thread pool (a write waits for the disk), one at a time per connection,
/// through a ``SQLiteCallQueue``: a connection never holds more than one of the pool's threads.
final class SQLiteStatementConnection: Sendable {
    /// A failed SQLite call: its extended result code and SQLite's message.
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        let message: String
        /// Another connection holds the lock (SQLITE_BUSY, any extended form).
        var isBusy: Bool { self.code & 0xff == 5 }
        var description: String { "SQLite error \(self.code): \(self.message)" }
    }

    /// Statements longer than this (the multi-row forms for large batches) are prepared each time and
    /// not kept: rarely the same twice, and large.
    static let cachedTextLimit = 2_048
    /// The most statements kept; past it, the cache starts again.
    static let cacheCapacity = 64

    /// The handle and statements, used only under the lock.
    private struct State: ~Copyable, @unchecked Sendable {
        var handle: OpaquePointer?
        var statements: [String: OpaquePointer] = [:]
    }

    private let state: Mutex<State>
    /// This connection's calls, one at a time.
    private let calls: SQLiteCallQueue

    private init(handle: OpaquePointer, threadPool: NIOThreadPool) {
        self.state = Mutex(State(handle: handle))
        self.calls = SQLiteCallQueue(threadPool: threadPool)
    }

    /// Opens (creating if needed) the database file at `path`.
    static func open(path: String, threadPool: NIOThreadPool = .singleton) async throws -> SQLiteStatementConnection {
        try await threadPool.runIfActive {
            var handle: OpaquePointer?
            // SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_EXRESCODE
            let result = sqlite_nio_sqlite3_open_v2(path, &handle, 0x2 | 0x4 | 0x10000 | 0x0200_0000, nil)
            guard result == 0, let handle else {
                let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
                if let handle { sqlite_nio_sqlite3_close_v2(handle) }
                throw Failure(code: result, message: message)
            }
            // Kept statements keep their plan whatever is bound: without this, the outbox claim (its
            // LIMIT bound) was prepared again on most rounds, about 167,000 instructions each time.
            let stability = pushgate_sqlite_enable_qpsg(handle)
            guard stability == 0 else {
                sqlite_nio_sqlite3_close_v2(handle)
                throw Failure(code: stability, message: "cannot turn on the query planner stability guarantee")
            }
            return SQLiteStatementConnection(handle: handle, threadPool: threadPool)
        }
    }

    /// Runs one statement with `binds` (`?` parameters in order) and returns its rows.
    func query(_ sql: String, _ binds: [SQLiteData]) async throws -> [[SQLiteData]] {
        try await self.calls.run { try self.run(sql, binds).rows }
    }

    /// Runs one statement, as ``query(_:_:)`` does, with a commit that does not wait for the disk: the
    /// connection's `synchronous` setting is NORMAL for the statement and FULL again after it (whether it
    /// failed or not), all in one call on the pool. Returns the rows and how many rows it inserted,
    /// updated or deleted (SQLite's count, where `RETURNING` would cost a temporary table).
    func runDeferringSync(_ sql: String, _ binds: [SQLiteData]) async throws -> (rows: [[SQLiteData]], changes: Int) {
        try await self.calls.run {
            _ = try self.run(Self.deferredSyncPragma, [])
            let outcome = Result { try self.run(sql, binds) }
            _ = try self.run(Self.fullSyncPragma, [])
            let result = try outcome.get()
            return (result.rows, result.changes)
        }
    }

    /// The `synchronous` setting of a commit that does not wait for the disk (see
    /// ``SQLiteStore/deferringSync(_:_:)``).
    static let deferredSyncPragma = "PRAGMA synchronous = NORMAL"
    /// The `synchronous` setting of every other commit: the write-ahead log is synced before it returns.
    static let fullSyncPragma = "PRAGMA synchronous = FULL"

    /// Runs one INSERT and returns how many rows it inserted and the rowid of the last (SQLite's
    /// `last_insert_rowid`), where `RETURNING` would cost a temporary table and a row for each id.
    func insert(_ sql: String, _ binds: [SQLiteData]) async throws -> (changes: Int, lastRowID: Int64) {
        try await self.calls.run {
            let result = try self.run(sql, binds)
            return (result.changes, result.lastRowID)
        }
    }

    /// How often SQLite prepared the kept statement `sql` again since it was kept (for tests); nil when it
    /// is not kept.
    func repreparations(of sql: String) async throws -> Int? {
        try await self.calls.run {
            self.state.withLock { state in
                // SQLITE_STMTSTATUS_REPREPARE
                state.statements[sql].map { Int(sqlite_nio_sqlite3_stmt_status($0, 5, 0)) }
            }
        }
    }

    /// Finalizes the kept statements and closes the connection; later calls fail.
    func close() async {
        _ = try? await self.calls.run {
            self.state.withLock { state in
                for statement in state.statements.values { sqlite_nio_sqlite3_finalize(statement) }
                state.statements = [:]
                if let handle = state.handle { sqlite_nio_sqlite3_close_v2(handle) }
                state.handle = nil
            }
        }
    }

    private func run(_ sql: String, _ binds: [SQLiteData]) throws -> (rows: [[SQLiteData]], changes: Int, lastRowID: Int64) {
        try self.state.withLock { state in
            guard let handle = state.handle else { throw Failure(code: 21, message: "the connection is closed") }
            let keep = sql.utf8.count <= Self.cachedTextLimit
            let statement: OpaquePointer
            if keep, let kept = state.statements[sql] {
                statement = kept
            } else {
                var prepared: OpaquePointer?
                // SQLITE_PREPARE_PERSISTENT for statements that are kept.
                let result = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, keep ? 0x01 : 0, &prepared, nil)
                guard result == 0, let prepared else { throw Self.failure(handle) }
                statement = prepared
                if keep {
                    if state.statements.count >= Self.cacheCapacity {
                        for old in state.statements.values { sqlite_nio_sqlite3_finalize(old) }
                        state.statements.removeAll(keepingCapacity: true)
                    }
                    state.statements[sql] = statement
                }
            }
            defer {
                if keep {
                    sqlite_nio_sqlite3_reset(statement)
                    sqlite_nio_sqlite3_clear_bindings(statement)
                } else {
                    sqlite_nio_sqlite3_finalize(statement)
                }
            }
            try Self.bind(binds, to: statement, handle: handle)
            var rows: [[SQLiteData]] = []
            while true {
                let result = sqlite_nio_sqlite3_step(statement)
                if result == 101 {  // SQLITE_DONE
                    return (rows, Int(sqlite_nio_sqlite3_changes(handle)), sqlite_nio_sqlite3_last_insert_rowid(handle))
                }
                guard result == 100 else { throw Self.failure(handle) }  // SQLITE_ROW
                rows.append(Self.row(statement))
            }
        }
    }

    private static func bind(_ binds: [SQLiteData], to statement: OpaquePointer, handle: OpaquePointer) throws {
        guard binds.count == Int(sqlite_nio_sqlite3_bind_parameter_count(statement)) else {
            throw Failure(code: 25, message: "\(binds.count) values for \(sqlite_nio_sqlite3_bind_parameter_count(statement)) parameters")
        }
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .integer(let integer):
                result = sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
            case .float(let double):
                result = sqlite_nio_sqlite3_bind_double(statement, index, double)
            case .text(var text):
                result = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { pushgate_sqlite_bind_text_copy(statement, index, $0.baseAddress, Int32($0.count)) }
                }
            case .blob(let buffer):
                result = buffer.withUnsafeReadableBytes { pushgate_sqlite_bind_blob_copy(statement, index, $0.baseAddress, Int32($0.count)) }
            case .null:
                result = sqlite_nio_sqlite3_bind_null(statement, index)
            }
            guard result == 0 else { throw Self.failure(handle) }
        }
    }

    private static func row(_ statement: OpaquePointer) -> [SQLiteData] {
        let count = sqlite_nio_sqlite3_column_count(statement)
        var columns: [SQLiteData] = []
        columns.reserveCapacity(Int(count))
        for column in 0..<count {
            switch sqlite_nio_sqlite3_column_type(statement, column) {
            case 1:  // SQLITE_INTEGER
                columns.append(.integer(Int(sqlite_nio_sqlite3_column_int64(statement, column))))
            case 2:  // SQLITE_FLOAT
                columns.append(.float(sqlite_nio_sqlite3_column_double(statement, column)))
            case 3:  // SQLITE_TEXT
                let text = sqlite_nio_sqlite3_column_text(statement, column)
                let length = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
                columns.append(.text(text.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""))
            case 4:  // SQLITE_BLOB
                let bytes = sqlite_nio_sqlite3_column_blob(statement, column)
                let length = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
                columns.append(.blob(bytes.map { ByteBuffer(bytes: UnsafeRawBufferPointer(start: $0, count: length)) } ?? ByteBuffer()))
            default:  // SQLITE_NULL
                columns.append(.null)
            }
        }
        return columns
    }

    private static func failure(_ handle: OpaquePointer) -> Failure {
        Failure(code: sqlite_nio_sqlite3_extended_errcode(handle), message: String(cString: sqlite_nio_sqlite3_errmsg(handle)))
    }
}
