public import Foundation
import PushgateCore
public import PushgateStore
import SQLiteNIO

// The outbox in SQLite.
extension SQLiteStore {
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
    static func insertOutbox(
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
    static func insertOutboxStatement(_ chunk: ArraySlice<OutboxMessage>, now: Int, lease: OutboxLease?) -> (String, [SQLiteData]) {
        var binds: [SQLiteData] = []
        binds.reserveCapacity(chunk.count * 10)
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
            binds.append(.text(message.frontEnd))
            Self.appendTokenColumns(OutboxTokenColumns(message.pushTokens), to: &binds)
            binds.append(.blob(lastBuffer))
            binds.append(.integer(Int(message.notBefore.millisecondsSince1970)))
            binds.append(.integer(now))
            binds += leaseBinds
        }
        return (SQLiteOutboxInsert.sql(rows: chunk.count, leased: lease != nil), binds)
    }

    /// Binds an entry's token columns: first token, more tokens, token count (three NULLs for none).
    static func appendTokenColumns(_ tokens: OutboxTokenColumns?, to binds: inout [SQLiteData]) {
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
        let lanes: Int = try await self.scalar(on: self.reader, StoreStatements.countOutboxLanes(.sqlite), [])
        // An empty outbox (what an idle worker polls) has nothing to lease: no write transaction.
        guard lanes > 0 else { return [] }
        // A lease lost to a power cut is no lease: its entries are due again (see `deferringSync`).
        let rows = try await self.runDeferringSync(
            SQLiteMigrations.claimDue,
            [
                .text(owner), .integer(Int(nowMS + lease.wholeMilliseconds)), .integer(Int(nowMS)), .integer(limit),
                .integer(StoreStatements.claimShare(limit: limit, lanes: lanes)),
            ]
        ).rows
        return try rows.map(Self.decodeOutboxEntry).sorted { ($0.message.notBefore, $0.id) < ($1.message.notBefore, $1.id) }
    }

    public func complete(id: Int64, owner: String) async throws -> Bool {
        // A completion follows a delivery: losing it to a power cut means a second delivery, never a lost one.
        try await !self.runDeferringSync(StoreStatements.completeOutboxEntry, [.integer(Int(id)), .text(owner)]).rows.isEmpty
    }

    public func complete(ids: [Int64], owner: String) async throws -> Int {
        var removed = 0
        // Under SQLite's bind limit per statement; a statement alone needs no transaction.
        for chunk in ids.chunked(by: 500) {
            let binds: [SQLiteData] = [.text(owner)] + chunk.map { .integer(Int($0)) }
            removed += try await self.runDeferringSync(Self.completeOutboxEntries(count: chunk.count), binds).changes
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

    public func backlogByApp() async throws -> [OutboxAppBacklog] {
        try await self.run(on: self.reader, StoreStatements.outboxBacklogByApp, []).map { row in
            guard row.count == 3, let appID = row[0].string, let tokens = row[1].integer, let oldest = row[2].integer else {
                throw StoreError.corruptRow("unreadable outbox backlog row")
            }
            return OutboxAppBacklog(appID: appID, tokens: tokens, oldestCreatedAt: Date(millisecondsSince1970: Int64(oldest)))
        }
    }
}
