import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import Logging
import NIOCore
import PushgateCore
public import PushgateStore
import ServiceLifecycle
import SQLiteNIO

/// The embedded store: one SQLite file in WAL mode, through connections that keep their prepared
/// statements (``SQLiteStatementConnection``).
///
/// Writes go through one connection (SQLite has a single writer) and reads through another, so lookups do
/// not wait behind writes. Several processes may open the same file: every write is one statement, and
/// SQLite's file lock makes it atomic.
public final class SQLiteStore: PushStore {
    public let kind = "sqlite"
    /// The database file.
    public let path: String
    let writer: SQLiteStatementConnection
    let reader: SQLiteStatementConnection
    let writes = WriteSerializer()
    /// Concurrent Status seen marks, written together: one INSERT (one transaction, one sync of the WAL)
    /// for all that arrive while a write is under way. SQLite has one writer and each commit waits for the
    /// disk; one commit per push request capped the Status server below a thousand requests a second.
    let seenMarks: WriteCoalescer<SeenMark, Bool>
    /// Concurrent single-statement writes of the delivery path (reschedules, invalid-token records and the
    /// removals they cause), written together in one transaction. A provider that answered "later" or
    /// "invalid" for many tokens at once had each answer committed (and synced) on its own, one after the
    /// other, and every other write, front ends' enqueues included, waited behind them: seconds, under load.
    /// Only statements that cannot fail on their data go this way, so one caller's write cannot fail
    /// another's.
    let batchedStatements: WriteCoalescer<BatchedStatement, [[SQLiteData]]>
    let logger: Logger

    private init(path: String, writer: SQLiteStatementConnection, reader: SQLiteStatementConnection, logger: Logger) {
        self.path = path
        self.writer = writer
        self.reader = reader
        self.logger = logger
        let writes = self.writes
        self.seenMarks = WriteCoalescer(maximumWeight: 500) { marks in try await Self.insertSeen(marks, on: writer, writes: writes) }
        self.batchedStatements = WriteCoalescer(maximumWeight: 500) { statements in
            try await Self.runTogether(statements, on: writer, writes: writes)
        }
    }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    /// - Parameters:
    ///   - path: the database file; relative paths are taken from the working directory.
    ///   - logger: where migrations are reported.
    /// - Throws: ``StoreError`` when the file cannot be opened or migrated.
    public static func open(path: String, logger: Logger) async throws -> SQLiteStore {
        var opened: [SQLiteStatementConnection] = []
        // A database this call makes holds push tokens and notifications: its owner's alone, whatever the
        // umask (SQLite gives the WAL and shared-memory files the database file's mode). One that exists
        // keeps the mode its operator gave it.
        if !path.hasPrefix(":memory:") && !path.hasPrefix("file:") {
            // Made empty with that mode before SQLite opens it (an empty file is a new database), so no
            // other user can open it in between; `O_EXCL` leaves a file that exists as it is.
            Self.createOwnerOnly(path)
        }
        do {
            let writer = try await SQLiteStatementConnection.open(path: path)
            opened.append(writer)
            for pragma in [
                Self.busyTimeoutPragma, "PRAGMA journal_mode = WAL", SQLiteStatementConnection.fullSyncPragma, "PRAGMA foreign_keys = ON",
                Self.checkpointPragma,
            ] {
                _ = try await Self.query(writer, pragma, [])
            }
            try await Self.migrate(writer, logger: logger)
            let reader = try await SQLiteStatementConnection.open(path: path)
            opened.append(reader)
            for pragma in [Self.busyTimeoutPragma, "PRAGMA query_only = ON", Self.readerCachePragma] {
                _ = try await Self.query(reader, pragma, [])
            }
            return SQLiteStore(path: path, writer: writer, reader: reader, logger: logger)
        } catch {
            for connection in opened { await connection.close() }
            if let error = error as? StoreError { throw error }
            throw StoreError.unavailable("cannot open the SQLite database at \(path): \(error)")
        }
    }

    /// Creates `path` empty, readable and writable by its owner only, unless it exists.
    private static func createOwnerOnly(_ path: String) {
        #if canImport(Glibc)
        let descriptor = Glibc.open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 { Glibc.close(descriptor) }
        #elseif canImport(Musl)
        let descriptor = Musl.open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 { Musl.close(descriptor) }
        #elseif canImport(Darwin)
        let descriptor = Darwin.open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 { Darwin.close(descriptor) }
        #endif
    }

    static func migrate(_ connection: SQLiteStatementConnection, logger: Logger) async throws {
        _ = try await Self.query(connection, StoreStatements.createMigrationsTable, [])
        // BEGIN IMMEDIATE takes the write lock, so two processes starting together migrate one after the other.
        try await Self.inTransaction(connection) {
            let current = try await Self.query(connection, StoreStatements.selectSchemaVersion, []).first?.first?.integer ?? 0
            for migration in try SQLiteMigrations.plan.pending(after: Int(current)) {
                for statement in migration.statements {
                    _ = try await Self.query(connection, statement, [])
                }
                _ = try await Self.query(
                    connection,
                    StoreStatements.recordMigration,
                    [.integer(migration.version), .text(migration.name), .integer(Int(Date().millisecondsSince1970))]
                )
                logger.info("applied migration", metadata: ["store": "sqlite", "version": "\(migration.version)"])
            }
        }
    }

    /// Waits for graceful shutdown (or cancellation), then closes the connections.
    public func run() async throws {
        try? await gracefulShutdown()
        // Closing runs in a task of its own so that a cancelled service still closes its connections.
        let (reader, writer) = (self.reader, self.writer)
        await Task {
            await reader.close()
            await writer.close()
        }.value
    }

    public func ping() async throws {
        _ = try await self.run(on: self.reader, "SELECT 1", [])
    }

    /// SQLite's own message (it names tables and columns, not values), else the error's type.
    public func storeError(for error: any Error) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as SQLiteStatementConnection.Failure: .unavailable("SQLite: \(error.message)")
        default: .unavailable("SQLite: \(type(of: error))")
        }
    }

    // MARK: Helpers

    /// One statement for ``batchedStatements``.
    struct BatchedStatement: Sendable {
        let sql: String
        let binds: [SQLiteData]
    }

    /// Runs statements in one transaction (one statement alone needs none) and returns each one's rows, as
    /// running them one at a time would. They record what deliveries found (the batched statements, delivery
    /// counts), so the commit does not sync the write-ahead log (see ``deferringSync(_:_:)``).
    static func runTogether(
        _ statements: [BatchedStatement], on connection: SQLiteStatementConnection, writes: WriteSerializer
    ) async throws -> [[[SQLiteData]]] {
        try await writes.run {
            if statements.count == 1 {
                return [try await Self.queryDeferringSync(connection, statements[0].sql, statements[0].binds).rows]
            }
            return try await Self.deferringSync(connection) {
                try await Self.inTransaction(connection) {
                    var answers: [[[SQLiteData]]] = []
                    answers.reserveCapacity(statements.count)
                    for statement in statements {
                        answers.append(try await Self.query(connection, statement.sql, statement.binds))
                    }
                    return answers
                }
            }
        }
    }

    func run(on connection: SQLiteStatementConnection, _ sql: String, _ binds: [SQLiteData]) async throws -> [[SQLiteData]] {
        if connection === self.writer {
            return try await self.writes.run { try await Self.query(connection, sql, binds) }
        }
        return try await Self.query(connection, sql, binds)
    }

    /// Runs one statement. When another connection holds the write lock, SQLite answers "busy" after a
    /// few milliseconds (see ``busyTimeoutPragma``) and the statement is tried again after an async pause,
    /// so waiting never occupies one of the few threads SQLite calls run on.
    static func query(_ connection: SQLiteStatementConnection, _ sql: String, _ binds: [SQLiteData]) async throws -> [[SQLiteData]] {
        try await Self.retryingWhileBusy { try await connection.query(sql, binds) }
    }

    /// Runs `body` between `BEGIN IMMEDIATE` and `COMMIT` on `connection`; rolls back and rethrows when it
    /// throws. `BEGIN IMMEDIATE` takes the write lock at once, so another process's writer cannot slip in.
    static func inTransaction<T>(_ connection: SQLiteStatementConnection, _ body: () async throws -> T) async throws -> T {
        _ = try await Self.query(connection, "BEGIN IMMEDIATE", [])
        do {
            let value = try await body()
            _ = try await Self.query(connection, "COMMIT", [])
            return value
        } catch {
            _ = try? await Self.query(connection, "ROLLBACK", [])
            throw error
        }
    }

    /// Runs `call`, again after an async pause while another connection holds the write lock.
    static func retryingWhileBusy<T>(_ call: () async throws -> T) async throws -> T {
        var pause = Duration.milliseconds(1)
        let giveUp = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try await call()
            } catch let error as SQLiteStatementConnection.Failure where error.isBusy && ContinuousClock.now < giveUp {
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(50))
            } catch let error as SQLiteStatementConnection.Failure {
                throw StoreError.unavailable("SQLite: \(error.message)")
            }
        }
    }

    /// How many pages the write-ahead log holds before the commit that passes it copies them into the
    /// database file (a checkpoint, which that commit's callers wait for): a quarter of SQLite's default
    /// (1,000 pages, about 4 MiB). Under a steady inflow of outbox entries a checkpoint of 1,000 pages held
    /// the writer for several milliseconds, and every answer that waited on that commit with it; checkpoints
    /// of 250 pages come four times as often but each holds the writer for a quarter of that. The log also
    /// stays near 1 MiB.
    static let checkpointPages = 250
    static let checkpointPragma = "PRAGMA wal_autocheckpoint = \(checkpointPages)"

    /// The reader's page cache, in KiB (SQLite's default is 2,000 KiB a connection). The reader answers
    /// point lookups (devices, registrations, invalid tokens), whose B-tree interior pages fit many times
    /// over, and the backlog sampler's scan of the whole outbox every 15 seconds, which under a backlog
    /// filled the default cache with pages nobody read again: resident memory the gateway kept for
    /// nothing. Pages it drops are still in the kernel's page cache.
    static let readerCacheKiB = 512
    static let readerCachePragma = "PRAGMA cache_size = -\(readerCacheKiB)"

    /// A short busy timeout instead of a long wait, which would hold a thread-pool thread while another
    /// connection's transaction waits for that same thread.
    static let busyTimeoutPragma = "PRAGMA busy_timeout = 5"

    func scalar(on connection: SQLiteStatementConnection, _ sql: String, _ binds: [SQLiteData]) async throws -> Int {
        guard let value = try await self.run(on: connection, sql, binds).first?.first?.integer else {
            throw StoreError.corruptRow("expected a number from the database")
        }
        return Int(value)
    }

    static func binds(_ device: DeviceRegistration) -> [SQLiteData] {
        [
            .text(device.namespace), .text(device.deviceID), .text(device.appID), .text(device.pushToken),
            device.publicKey.map { .text($0) } ?? .null, .text(DeviceAttributesCoding.encode(device.attributes)),
            .integer(Int(device.createdAt.millisecondsSince1970)), .integer(Int(device.updatedAt.millisecondsSince1970)),
        ]
    }

    static func decodeDevice(_ columns: [SQLiteData]) throws -> DeviceRegistration {
        guard columns.count == 8, let namespace = columns[0].string, let deviceID = columns[1].string,
            let appID = columns[2].string, let token = columns[3].string, let attributes = columns[5].string,
            let created = columns[6].integer, let updated = columns[7].integer
        else { throw StoreError.corruptRow("unreadable device row") }
        return DeviceRegistration(
            namespace: namespace, deviceID: deviceID, appID: appID, pushToken: token, publicKey: columns[4].string,
            attributes: try DeviceAttributesCoding.decode(attributes),
            createdAt: Date(millisecondsSince1970: Int64(created)), updatedAt: Date(millisecondsSince1970: Int64(updated))
        )
    }

    static func decodeOutboxEntry(_ columns: [SQLiteData]) throws -> OutboxEntry {
        guard columns.count == 10, let id = columns[0].integer, let appID = columns[1].string,
            let token = columns[2].string, let payload = columns[3].blob, let attempts = columns[4].integer,
            let notBefore = columns[5].integer, let created = columns[6].integer, let frontEnd = columns[9].string
        else { throw StoreError.corruptRow("unreadable outbox row") }
        let message = OutboxMessage(
            appID: appID, frontEnd: frontEnd, pushTokens: try OutboxTokenColumns.tokens(first: token, more: columns[8].string), payload: Array(buffer: payload),
            notBefore: Date(millisecondsSince1970: Int64(notBefore))
        )
        return OutboxEntry(
            id: Int64(id), message: message, attempts: attempts,
            createdAt: Date(millisecondsSince1970: Int64(created)), lastError: columns[7].string
        )
    }
}

extension SQLiteStore: CustomStringConvertible {
    public var description: String { "SQLiteStore" }
}
