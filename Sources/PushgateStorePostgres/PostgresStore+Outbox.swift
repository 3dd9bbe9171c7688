public import Foundation
import PostgresNIO
import PushgateCore
public import PushgateStore

// The outbox in PostgreSQL.
extension PostgresStore {
    public func enqueue(_ messages: [OutboxMessage], leasedTo lease: OutboxLease?) async throws -> [Int64] {
        guard !messages.isEmpty else { return [] }
        let now = Date().millisecondsSince1970
        return try await self.client.withTransaction(logger: self.logger) { connection in
            var ids: [Int64] = []
            ids.reserveCapacity(messages.count)
            for chunk in messages.chunked(by: 1000) {
                // A lease's owner and end are two parameters every row shares.
                var sql = lease == nil
                    ? "INSERT INTO outbox (app_id, front_end, push_token, more_tokens, token_count, payload, not_before, created_at) VALUES "
                    : "INSERT INTO outbox (app_id, front_end, push_token, more_tokens, token_count, payload, not_before, created_at, lease_owner, lease_until, attempts) VALUES "
                var binds = PostgresBindings(capacity: chunk.count * 8 + 2)
                let shared = chunk.count * 8
                for (index, message) in chunk.enumerated() {
                    let base = index * 8
                    sql += index == 0 ? "(" : ", ("
                    sql += "$\(base + 1), $\(base + 2), $\(base + 3), $\(base + 4), $\(base + 5), $\(base + 6), $\(base + 7), $\(base + 8)"
                    sql += lease == nil ? ")" : ", $\(shared + 1), $\(shared + 2), 1)"
                    let tokens = OutboxTokenColumns(message.pushTokens)
                    binds.append(message.appID)
                    binds.append(message.frontEnd)
                    binds.append(tokens.first)
                    binds.append(tokens.more)
                    binds.append(tokens.count)
                    binds.append(ByteBuffer(bytes: message.payload))
                    binds.append(message.notBefore.millisecondsSince1970)
                    binds.append(now)
                }
                if let lease {
                    binds.append(lease.owner)
                    binds.append(lease.until.millisecondsSince1970)
                }
                let query = PostgresQuery(unsafeSQL: sql + " RETURNING id", binds: binds)
                // BIGSERIAL ids rise in insertion order within the transaction.
                ids += try await connection.query(query, logger: self.logger).decode(Int64.self).all().sorted()
            }
            return ids
        }
    }

    public func claimDue(now: Date, limit: Int, leaseFor lease: Duration, owner: String) async throws -> [OutboxEntry] {
        let nowMS = now.millisecondsSince1970
        var binds = PostgresBindings()
        binds.append(owner)
        binds.append(nowMS + lease.wholeMilliseconds)
        binds.append(nowMS)
        binds.append(Int64(limit))
        let lanes: Int = try await self.scalar(StoreStatements.countOutboxLanes(.postgres), PostgresBindings())
        // An empty outbox (what idle workers poll) has nothing to lease: no write.
        guard lanes > 0 else { return [] }
        binds.append(Int64(StoreStatements.claimShare(limit: limit, lanes: lanes)))
        let rows = try await self.rows(PostgresMigrations.claimDue, binds)
            .decode((Int64, String, String, ByteBuffer, Int, Int64, Int64, String?, String?, String).self).all()
        return try rows.map { row in
            OutboxEntry(
                id: row.0,
                message: OutboxMessage(
                    appID: row.1, frontEnd: row.9, pushTokens: try OutboxTokenColumns.tokens(first: row.2, more: row.8), payload: Array(buffer: row.3),
                    notBefore: Date(millisecondsSince1970: row.5)
                ),
                attempts: row.4, createdAt: Date(millisecondsSince1970: row.6), lastError: row.7
            )
        }.sorted { ($0.message.notBefore, $0.id) < ($1.message.notBefore, $1.id) }
    }

    public func complete(id: Int64, owner: String) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(id)
        binds.append(owner)
        return try await !self.rows(StoreStatements.completeOutboxEntry, binds).decode(Int64.self).all().isEmpty
    }

    public func complete(ids: [Int64], owner: String) async throws -> Int {
        var removed = 0
        for chunk in ids.chunked(by: 1000) {
            var binds = PostgresBindings(capacity: chunk.count + 1)
            binds.append(owner)
            for id in chunk { binds.append(id) }
            removed += try await self.rows(StoreStatements.completeOutboxEntries(count: chunk.count), binds).decode(Int64.self).all().count
        }
        return removed
    }

    public func reschedule(_ retries: [OutboxRetry], owner: String) async throws -> Int {
        var released = 0
        for chunk in retries.chunked(by: StoreStatements.rescheduleChunkSize) {
            var binds = PostgresBindings(capacity: 6 * chunk.count + 1)
            for retry in chunk {
                let remaining = retry.remainingTokens.map(OutboxTokenColumns.init)
                binds.append(retry.id)
                binds.append(retry.notBefore.millisecondsSince1970)
                binds.append(retry.error)
                binds.append(remaining?.first)
                binds.append(remaining?.more)
                binds.append(remaining?.count)
            }
            binds.append(owner)
            released += try await self.rows(StoreStatements.rescheduleOutboxEntries(count: chunk.count), binds).decode(Int64.self).all().count
        }
        return released
    }

    public func pendingCount() async throws -> Int {
        try await self.scalar(StoreStatements.countOutbox, PostgresBindings())
    }

    public func backlogByApp() async throws -> [OutboxAppBacklog] {
        try await self.rows(StoreStatements.outboxBacklogByApp, PostgresBindings()).decode((String, Int, Int64).self).all().map {
            OutboxAppBacklog(appID: $0.0, tokens: $0.1, oldestCreatedAt: Date(millisecondsSince1970: $0.2))
        }
    }
}
