public import Foundation
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
    private let writer: SQLiteStatementConnection
    private let reader: SQLiteStatementConnection
    private let writes = WriteSerializer()
    /// Concurrent Status seen marks, written together: one INSERT (one transaction, one sync of the WAL)
    /// for all that arrive while a write is under way. SQLite has one writer and each commit waits for the
    /// disk; one commit per push request capped the Status server below a thousand requests a second.
    private let seenMarks: WriteCoalescer<SeenMark, Bool>
    /// Concurrent single-statement writes of the delivery path (reschedules, invalid-token records and the
    /// removals they cause), written together in one transaction. A provider that answered "later" or
    /// "invalid" for many tokens at once had each answer committed (and synced) on its own, one after the
    /// other, and every other write, front ends' enqueues included, waited behind them: seconds, under load.
    /// Only statements that cannot fail on their data go this way, so one caller's write cannot fail
    /// another's.
    private let batchedStatements: WriteCoalescer<BatchedStatement, [[SQLiteData]]>
    private let logger: Logger

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
        do {
            let writer = try await SQLiteStatementConnection.open(path: path)
            opened.append(writer)
            for pragma in [Self.busyTimeoutPragma, "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL", "PRAGMA foreign_keys = ON"] {
                _ = try await Self.query(writer, pragma, [])
            }
            try await Self.migrate(writer, logger: logger)
            let reader = try await SQLiteStatementConnection.open(path: path)
            opened.append(reader)
            for pragma in [Self.busyTimeoutPragma, "PRAGMA query_only = ON"] {
                _ = try await Self.query(reader, pragma, [])
            }
            return SQLiteStore(path: path, writer: writer, reader: reader, logger: logger)
        } catch {
            for connection in opened { await connection.close() }
            if let error = error as? StoreError { throw error }
            throw StoreError.unavailable("cannot open the SQLite database at \(path): \(error)")
        }
    }

    private static func migrate(_ connection: SQLiteStatementConnection, logger: Logger) async throws {
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

    // MARK: Devices

    public func saveDevice(_ device: DeviceRegistration) async throws {
        _ = try await self.run(on: self.writer, StoreStatements.upsertDevice, Self.binds(device))
    }

    public func saveDevices(_ devices: [DeviceRegistration]) async throws {
        let unique = devices.keepingLastPerDevice()
        guard !unique.isEmpty else { return }
        let connection = self.writer
        try await self.writes.run {
            try await Self.inTransaction(connection) {
                for chunk in unique.chunked(by: StoreStatements.upsertDevicesChunkSize) {
                    _ = try await Self.query(connection, StoreStatements.upsertDevices(count: chunk.count), chunk.flatMap(Self.binds))
                }
            }
        }
    }

    public func insertDeviceIfAbsent(_ device: DeviceRegistration) async throws -> Bool {
        try await !self.run(on: self.writer, StoreStatements.insertDeviceIfAbsent, Self.binds(device)).isEmpty
    }

    public func device(namespace: String, deviceID: String) async throws -> DeviceRegistration? {
        try await self.run(on: self.reader, StoreStatements.selectDevice, [.text(namespace), .text(deviceID)])
            .first.map(Self.decodeDevice)
    }

    public func devices(namespace: String, deviceIDs: [String]) async throws -> [DeviceRegistration] {
        var found: [DeviceRegistration] = []
        for chunk in Array(Set(deviceIDs)).chunked(by: StoreStatements.selectDevicesChunkSize) {
            let binds = [SQLiteData.text(namespace)] + chunk.map { SQLiteData.text($0) }
            found += try await self.run(on: self.reader, StoreStatements.selectDevices(count: chunk.count), binds).map(Self.decodeDevice)
        }
        return found
    }

    public func deleteDevice(namespace: String, deviceID: String) async throws -> Bool {
        try await !self.run(on: self.writer, StoreStatements.deleteDevice, [.text(namespace), .text(deviceID)]).isEmpty
    }

    public func deleteDevices(appID: String, pushToken: String) async throws -> Int {
        let statement = BatchedStatement(sql: StoreStatements.deleteDevicesByToken, binds: [.text(appID), .text(pushToken)])
        return try await self.batchedStatements.submit(statement).count
    }

    public func deviceCount(namespace: String) async throws -> Int {
        try await self.scalar(on: self.reader, StoreStatements.countDevices, [.text(namespace)])
    }

    // MARK: Outbox

    public func enqueue(_ messages: [OutboxMessage], leasedTo lease: OutboxLease?) async throws -> [Int64] {
        guard !messages.isEmpty else { return [] }
        let now = Int(Date().millisecondsSince1970)
        // One multi-row INSERT per chunk of at most `rowsPerStatement` rows, all chunks in one transaction.
        let connection = self.writer
        return try await self.writes.run {
            // One statement is a transaction of its own: no BEGIN and COMMIT (two more calls) needed.
            if messages.count <= SQLiteOutboxInsert.rowsPerStatement {
                return try await Self.insertOutbox(messages[...], now: now, lease: lease, on: connection)
            }
            var ids: [Int64] = []
            ids.reserveCapacity(messages.count)
            try await Self.inTransaction(connection) {
                for chunk in messages.chunked(by: SQLiteOutboxInsert.rowsPerStatement) {
                    ids += try await Self.insertOutbox(chunk, now: now, lease: lease, on: connection)
                }
            }
            return ids
        }
    }

    /// Inserts one chunk and returns its ids in insertion order. The outbox's ids are AUTOINCREMENT: each
    /// row of one INSERT gets one more than the largest id the table ever had, and no other write can come
    /// between the rows of one statement, so the chunk's ids are the `count` consecutive ids that end at
    /// the last inserted rowid.
    private static func insertOutbox(
        _ chunk: ArraySlice<OutboxMessage>, now: Int, lease: OutboxLease?, on connection: SQLiteStatementConnection
    ) async throws -> [Int64] {
        let (sql, binds) = Self.insertOutboxStatement(chunk, now: now, lease: lease)
        let (changes, last) = try await Self.retryingWhileBusy { try await connection.insert(sql, binds) }
        guard changes == chunk.count else {
            throw StoreError.unavailable("SQLite: an outbox INSERT of \(chunk.count) rows reported \(changes)")
        }
        return Array((last - Int64(changes) + 1)...last)
    }

    /// One multi-row INSERT (see ``SQLiteOutboxInsert``); rows that share a payload (the entries of one
    /// notification with more tokens than one entry holds) share one buffer of it.
    private static func insertOutboxStatement(_ chunk: ArraySlice<OutboxMessage>, now: Int, lease: OutboxLease?) -> (String, [SQLiteData]) {
        var binds: [SQLiteData] = []
        binds.reserveCapacity(chunk.count * 9)
        let leaseBinds: [SQLiteData] = lease.map { [.text($0.owner), .integer(Int($0.until.millisecondsSince1970))] } ?? []
        var lastPayload: [UInt8]?
        var lastBuffer = ByteBuffer()
        for message in chunk {
            // Equal arrays that share storage compare in constant time.
            if lastPayload != message.payload {
                lastPayload = message.payload
                lastBuffer = ByteBuffer(bytes: message.payload)
            }
            binds.append(.text(message.appID))
            Self.appendTokenColumns(OutboxTokenColumns(message.pushTokens), to: &binds)
            binds.append(.blob(lastBuffer))
            binds.append(.integer(Int(message.notBefore.millisecondsSince1970)))
            binds.append(.integer(now))
            binds += leaseBinds
        }
        return (SQLiteOutboxInsert.sql(rows: chunk.count, leased: lease != nil), binds)
    }

    /// Binds an entry's token columns: first token, more tokens, token count (three NULLs for none).
    private static func appendTokenColumns(_ tokens: OutboxTokenColumns?, to binds: inout [SQLiteData]) {
        guard let tokens else {
            binds += [.null, .null, .null]
            return
        }
        binds.append(.text(tokens.first))
        binds.append(tokens.more.map { .text($0) } ?? .null)
        binds.append(.integer(tokens.count))
    }

    public func claimDue(now: Date, limit: Int, leaseFor lease: Duration, owner: String) async throws -> [OutboxEntry] {
        let nowMS = now.millisecondsSince1970
        let rows = try await self.run(
            on: self.writer,
            SQLiteMigrations.claimDue,
            [.text(owner), .integer(Int(nowMS + lease.wholeMilliseconds)), .integer(Int(nowMS)), .integer(limit)]
        )
        return try rows.map(Self.decodeOutboxEntry).sorted { ($0.message.notBefore, $0.id) < ($1.message.notBefore, $1.id) }
    }

    public func complete(id: Int64, owner: String) async throws -> Bool {
        try await !self.run(on: self.writer, StoreStatements.completeOutboxEntry, [.integer(Int(id)), .text(owner)]).isEmpty
    }

    public func complete(ids: [Int64], owner: String) async throws -> Int {
        var removed = 0
        // Under SQLite's bind limit per statement; a statement alone needs no transaction.
        for chunk in ids.chunked(by: 500) {
            let binds: [SQLiteData] = [.text(owner)] + chunk.map { .integer(Int($0)) }
            removed += try await self.executeOnWriter(Self.completeOutboxEntries(count: chunk.count), binds)
        }
        return removed
    }

    /// ``StoreStatements/completeOutboxEntries(count:)`` without `RETURNING`: the connection counts the
    /// deleted rows. Binds the owner, then the ids.
    static func completeOutboxEntries(count: Int) -> String {
        var sql = "DELETE FROM outbox WHERE lease_owner = ? AND id IN ("
        for index in 0..<count { sql += index == 0 ? "?" : ", ?" }
        return sql + ")"
    }

    public func reschedule(_ retries: [OutboxRetry], owner: String) async throws -> Int {
        var released = 0
        for chunk in retries.chunked(by: StoreStatements.rescheduleChunkSize) {
            var binds: [SQLiteData] = []
            binds.reserveCapacity(6 * chunk.count + 1)
            for retry in chunk {
                binds.append(.integer(Int(retry.id)))
                binds.append(.integer(Int(retry.notBefore.millisecondsSince1970)))
                binds.append(.text(retry.error))
                Self.appendTokenColumns(retry.remainingTokens.map(OutboxTokenColumns.init), to: &binds)
            }
            binds.append(.text(owner))
            let statement = BatchedStatement(sql: StoreStatements.rescheduleOutboxEntries(count: chunk.count), binds: binds)
            released += try await self.batchedStatements.submit(statement, weight: chunk.count).count
        }
        return released
    }

    public func pendingCount() async throws -> Int {
        try await self.scalar(on: self.reader, StoreStatements.countOutbox, [])
    }

    // MARK: Counters

    public func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64 {
        let binds: [SQLiteData] = [
            .text(name), .integer(Int(amount)), expiresAt.map { .integer(Int($0.millisecondsSince1970)) } ?? .null,
            .integer(Int(now.millisecondsSince1970)),
        ]
        return Int64(try await self.scalar(on: self.writer, StoreStatements.incrementCounter, binds))
    }

    public func incrementCounters(_ names: [String], by amount: Int64, expiresAt: Date?, now: Date) async throws {
        guard !names.isEmpty else { return }
        // One multi-row upsert per chunk (a name given twice adds twice); one chunk needs no transaction.
        var totals: [String: Int64] = [:]
        var order: [String] = []
        for name in names {
            if totals[name] == nil { order.append(name) }
            totals[name, default: 0] += amount
        }
        let expiry = expiresAt.map { SQLiteData.integer(Int($0.millisecondsSince1970)) } ?? .null
        let statements = order.chunked(by: StoreStatements.selectDevicesChunkSize).map { chunk -> (String, [SQLiteData]) in
            var binds: [SQLiteData] = []
            for (offset, name) in chunk.enumerated() {
                binds.append(.text(name))
                binds.append(.integer(Int(totals[name] ?? amount)))
                if offset == 0 { binds.append(expiry) }
            }
            binds.append(.integer(Int(now.millisecondsSince1970)))
            return (Self.incrementCountersStatement(count: chunk.count), binds)
        }
        let connection = self.writer
        try await self.writes.run {
            if statements.count == 1 {
                _ = try await Self.query(connection, statements[0].0, statements[0].1)
                return
            }
            try await Self.inTransaction(connection) {
                for (sql, binds) in statements { _ = try await Self.query(connection, sql, binds) }
            }
        }
    }

    /// ``StoreStatements/incrementCounter`` for `count` names in one statement. SQLite numbers `$N`
    /// parameters in order of first appearance, so the binds are: name 1, amount 1, expiry, then name and
    /// amount of each further row, then now (ms).
    static func incrementCountersStatement(count: Int) -> String {
        let rows = (0..<count).map { row in
            row == 0 ? "($1, $2, $3)" : "($\(2 * row + 2), $\(2 * row + 3), $3)"
        }
        let now = "$\(2 * count + 2)"
        return """
            INSERT INTO counters (name, value, expires_at) VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (name) DO UPDATE SET
                value = CASE WHEN counters.expires_at IS NOT NULL AND counters.expires_at <= \(now)
                    THEN excluded.value ELSE counters.value + excluded.value END,
                expires_at = CASE WHEN counters.expires_at IS NOT NULL AND counters.expires_at <= \(now)
                    THEN excluded.expires_at ELSE counters.expires_at END
            """
    }

    public func counterValue(_ name: String, now: Date) async throws -> Int64 {
        let rows = try await self.run(on: self.reader, StoreStatements.selectCounter, [.text(name), .integer(Int(now.millisecondsSince1970))])
        return Int64(rows.first?.first?.integer ?? 0)
    }

    public func counterValues(_ names: [String], now: Date) async throws -> [String: Int64] {
        var values: [String: Int64] = [:]
        for chunk in Array(Set(names)).chunked(by: StoreStatements.selectDevicesChunkSize) {
            let binds = [SQLiteData.integer(Int(now.millisecondsSince1970))] + chunk.map { SQLiteData.text($0) }
            for columns in try await self.run(on: self.reader, StoreStatements.selectCounters(count: chunk.count), binds) {
                if columns.count == 2, let name = columns[0].string, let value = columns[1].integer { values[name] = Int64(value) }
            }
        }
        return values
    }

    public func purgeExpiredCounters(now: Date) async throws -> Int {
        try await self.run(on: self.writer, StoreStatements.purgeCounters, [.integer(Int(now.millisecondsSince1970))]).count
    }

    // MARK: Invalid tokens

    public func recordInvalidToken(_ record: InvalidTokenRecord) async throws {
        let binds: [SQLiteData] = [
            .text(record.appID), .text(record.pushToken), .text(record.reason), .integer(Int(record.recordedAt.millisecondsSince1970)),
        ]
        _ = try await self.batchedStatements.submit(BatchedStatement(sql: StoreStatements.upsertInvalidToken, binds: binds))
    }

    public func invalidToken(appID: String, pushToken: String) async throws -> InvalidTokenRecord? {
        try await self.run(on: self.reader, StoreStatements.selectInvalidToken, [.text(appID), .text(pushToken)])
            .first.map(Self.decodeInvalidToken)
    }

    public func clearInvalidToken(appID: String, pushToken: String) async throws -> Bool {
        try await !self.run(on: self.writer, StoreStatements.deleteInvalidToken, [.text(appID), .text(pushToken)]).isEmpty
    }

    public func invalidTokens(since: Date, limit: Int) async throws -> [InvalidTokenRecord] {
        try await self.run(on: self.reader, StoreStatements.selectInvalidTokensSince, [.integer(Int(since.millisecondsSince1970)), .integer(limit)])
            .map(Self.decodeInvalidToken)
    }

    private static func decodeInvalidToken(_ columns: [SQLiteData]) throws -> InvalidTokenRecord {
        guard columns.count == 4, let appID = columns[0].string, let token = columns[1].string, let reason = columns[2].string,
            let recorded = columns[3].integer
        else { throw StoreError.corruptRow("unreadable invalid-token row") }
        return InvalidTokenRecord(appID: appID, pushToken: token, reason: reason, recordedAt: Date(millisecondsSince1970: Int64(recorded)))
    }

    // MARK: Status server

    public func statusRegistration(publicKeyHash: [UInt8], installationID: String) async throws -> StatusRegistrationRecord? {
        try await self.run(on: self.reader, StatusStoreStatements.selectRegistration, [.blob(ByteBuffer(bytes: publicKeyHash)), .text(installationID)])
            .first.map(Self.decodeStatusRegistration)
    }

    public func statusRegistrations(publicKeyHashes: [[UInt8]]) async throws -> [StatusRegistrationRecord] {
        var found: [StatusRegistrationRecord] = []
        for chunk in Array(Set(publicKeyHashes)).chunked(by: StatusStoreStatements.selectRegistrationsChunkSize) {
            let binds = chunk.map { SQLiteData.blob(ByteBuffer(bytes: $0)) }
            found += try await self.run(on: self.reader, StatusStoreStatements.selectRegistrations(count: chunk.count), binds).map(Self.decodeStatusRegistration)
        }
        return found
    }

    public func saveStatusRegistration(_ record: StatusRegistrationRecord) async throws -> Bool {
        let binds: [SQLiteData] = [
            .blob(ByteBuffer(bytes: record.publicKeyHash)), .text(record.installationID),
            .integer(Int(try StatusStoreStatements.storedVersion(record.version))), record.registration.map { .blob(ByteBuffer(bytes: $0)) } ?? .null,
        ]
        return try await !self.run(on: self.writer, StatusStoreStatements.upsertRegistration, binds).isEmpty
    }

    public func dropStatusRegistration(publicKeyHash: [UInt8], installationID: String, version: UInt64) async throws -> Bool {
        let binds: [SQLiteData] = [
            .blob(ByteBuffer(bytes: publicKeyHash)), .text(installationID), .integer(Int(try StatusStoreStatements.storedVersion(version))),
        ]
        return try await !self.run(on: self.writer, StatusStoreStatements.dropRegistration, binds).isEmpty
    }

    public func statusRegisteredKeyHashes() async throws -> [[UInt8]] {
        try await self.run(on: self.reader, StatusStoreStatements.selectRegisteredKeyHashes, []).map { row in
            guard let hash = row.first?.blob else { throw StoreError.corruptRow("unreadable Status key hash") }
            return Array(buffer: hash)
        }
    }

    public func markStatusMessageSeen(_ id: [UInt8], claim: [UInt8], seenAt: Date) async throws -> Bool {
        try await self.seenMarks.submit(SeenMark(id: id, claim: claim, seenAt: Int(seenAt.millisecondsSince1970)))
    }

    /// One id to record as seen, with the claim of the attempt recording it and its time in milliseconds.
    struct SeenMark: Sendable {
        let id: [UInt8]
        let claim: [UInt8]
        let seenAt: Int
    }

    /// Writes a batch of seen marks in one statement; answers for each whether it takes its id (the id was
    /// new, or is recorded with the mark's claim). Of two marks with one id and different claims the first
    /// takes it, as if written one after the other.
    private static func insertSeen(_ marks: [SeenMark], on connection: SQLiteStatementConnection, writes: WriteSerializer) async throws -> [Bool] {
        var firsts = Set<[UInt8]>()
        let distinct = marks.filter { firsts.insert($0.id).inserted }
        var sql = "INSERT INTO status_seen (id, seen_at, claim) VALUES "
        var binds: [SQLiteData] = []
        binds.reserveCapacity(distinct.count * 3)
        for (index, mark) in distinct.enumerated() {
            sql += index == 0 ? "(?1, ?2, ?3)" : ", (?\(index * 3 + 1), ?\(index * 3 + 2), ?\(index * 3 + 3))"
            binds += [.blob(ByteBuffer(bytes: mark.id)), .integer(mark.seenAt), .blob(ByteBuffer(bytes: mark.claim))]
        }
        sql += " ON CONFLICT (id) DO UPDATE SET claim = status_seen.claim RETURNING id, claim"
        let rows = try await writes.run { try await Self.query(connection, sql, binds) }
        var stored: [[UInt8]: [UInt8]] = [:]
        for row in rows {
            guard row.count == 2, let id = row[0].blob else { throw StoreError.corruptRow("unreadable Status seen id") }
            if let claim = row[1].blob { stored[Array(buffer: id)] = Array(buffer: claim) }
        }
        return marks.map { stored[$0.id] == $0.claim }
    }

    public func pruneStatusMessagesSeen(before cutoff: Date) async throws -> Int {
        try await self.run(on: self.writer, StatusStoreStatements.pruneSeen, [.integer(Int(cutoff.millisecondsSince1970))]).count
    }

    public func statusIdentity() async throws -> [UInt8]? {
        try await self.run(on: self.reader, StatusStoreStatements.selectIdentity, []).first.map { row in
            guard let secret = row.first?.blob else { throw StoreError.corruptRow("unreadable Status identity") }
            return Array(buffer: secret)
        }
    }

    public func saveStatusIdentityIfAbsent(_ secret: [UInt8]) async throws -> [UInt8] {
        _ = try await self.run(on: self.writer, StatusStoreStatements.insertIdentity, [.blob(ByteBuffer(bytes: secret))])
        guard let stored = try await self.run(on: self.writer, StatusStoreStatements.selectIdentity, []).first?.first?.blob else {
            throw StoreError.corruptRow("the Status identity was not stored")
        }
        return Array(buffer: stored)
    }

    private static func decodeStatusRegistration(_ columns: [SQLiteData]) throws -> StatusRegistrationRecord {
        guard columns.count == 4, let hash = columns[0].blob, let installation = columns[1].string, let version = columns[2].integer, version >= 0
        else { throw StoreError.corruptRow("unreadable Status registration row") }
        return StatusRegistrationRecord(
            publicKeyHash: Array(buffer: hash), installationID: installation, version: UInt64(version), registration: columns[3].blob.map { Array(buffer: $0) }
        )
    }

    // MARK: Helpers

    /// One statement for ``batchedStatements``.
    struct BatchedStatement: Sendable {
        let sql: String
        let binds: [SQLiteData]
    }

    /// Runs statements in one transaction (one statement alone needs none) and returns each one's rows, as
    /// running them one at a time would.
    private static func runTogether(
        _ statements: [BatchedStatement], on connection: SQLiteStatementConnection, writes: WriteSerializer
    ) async throws -> [[[SQLiteData]]] {
        try await writes.run {
            if statements.count == 1 {
                return [try await Self.query(connection, statements[0].sql, statements[0].binds)]
            }
            return try await Self.inTransaction(connection) {
                var answers: [[[SQLiteData]]] = []
                answers.reserveCapacity(statements.count)
                for statement in statements {
                    answers.append(try await Self.query(connection, statement.sql, statement.binds))
                }
                return answers
            }
        }
    }

    private func run(on connection: SQLiteStatementConnection, _ sql: String, _ binds: [SQLiteData]) async throws -> [[SQLiteData]] {
        if connection === self.writer {
            return try await self.writes.run { try await Self.query(connection, sql, binds) }
        }
        return try await Self.query(connection, sql, binds)
    }

    /// Runs a statement that returns no rows on the writer, in turn with the other writes; returns how many
    /// rows it changed.
    private func executeOnWriter(_ sql: String, _ binds: [SQLiteData]) async throws -> Int {
        let connection = self.writer
        return try await self.writes.run { try await Self.retryingWhileBusy { try await connection.execute(sql, binds) } }
    }

    /// Runs one statement. When another connection holds the write lock, SQLite answers "busy" after a
    /// few milliseconds (see ``busyTimeoutPragma``) and the statement is tried again after an async pause,
    /// so waiting never occupies one of the few threads SQLite calls run on.
    private static func query(_ connection: SQLiteStatementConnection, _ sql: String, _ binds: [SQLiteData]) async throws -> [[SQLiteData]] {
        try await Self.retryingWhileBusy { try await connection.query(sql, binds) }
    }

    /// Runs `body` between `BEGIN IMMEDIATE` and `COMMIT` on `connection`; rolls back and rethrows when it
    /// throws. `BEGIN IMMEDIATE` takes the write lock at once, so another process's writer cannot slip in.
    private static func inTransaction<T>(_ connection: SQLiteStatementConnection, _ body: () async throws -> T) async throws -> T {
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
    private static func retryingWhileBusy<T>(_ call: () async throws -> T) async throws -> T {
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

    /// A short busy timeout instead of a long wait, which would hold a thread-pool thread while another
    /// connection's transaction waits for that same thread.
    static let busyTimeoutPragma = "PRAGMA busy_timeout = 5"

    private func scalar(on connection: SQLiteStatementConnection, _ sql: String, _ binds: [SQLiteData]) async throws -> Int {
        guard let value = try await self.run(on: connection, sql, binds).first?.first?.integer else {
            throw StoreError.corruptRow("expected a number from the database")
        }
        return Int(value)
    }

    private static func binds(_ device: DeviceRegistration) -> [SQLiteData] {
        [
            .text(device.namespace), .text(device.deviceID), .text(device.appID), .text(device.pushToken),
            device.publicKey.map { .text($0) } ?? .null, .text(DeviceAttributesCoding.encode(device.attributes)),
            .integer(Int(device.createdAt.millisecondsSince1970)), .integer(Int(device.updatedAt.millisecondsSince1970)),
        ]
    }

    private static func decodeDevice(_ columns: [SQLiteData]) throws -> DeviceRegistration {
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

    private static func decodeOutboxEntry(_ columns: [SQLiteData]) throws -> OutboxEntry {
        guard columns.count == 9, let id = columns[0].integer, let appID = columns[1].string,
            let token = columns[2].string, let payload = columns[3].blob, let attempts = columns[4].integer,
            let notBefore = columns[5].integer, let created = columns[6].integer
        else { throw StoreError.corruptRow("unreadable outbox row") }
        let message = OutboxMessage(
            appID: appID, pushTokens: try OutboxTokenColumns.tokens(first: token, more: columns[8].string), payload: Array(buffer: payload),
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
