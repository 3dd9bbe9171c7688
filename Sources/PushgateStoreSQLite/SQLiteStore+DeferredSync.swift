import SQLiteNIO

// Writes whose commit need not wait for the disk.
//
// The writer runs with `synchronous = FULL`: every commit syncs the write-ahead log before the caller hears
// of it, so what the gateway answered as accepted (an outbox entry, a registration) survives a power cut.
// Some writes only record what already happened: an outbox entry's completion after its delivery, a lease,
// a retry's new time, a seen Status message, an invalid token. Losing one of those to a power cut (never to
// a crash of the gateway alone: the log is in the kernel's cache by then) means a notification delivered
// again or a retry made early, not a notification lost. Their commits run with `synchronous = NORMAL`,
// which leaves the log unsynced; the next synced commit syncs the whole log, theirs included, since the log
// is one file written in order. Under load that removes about a third of the syncs, and the synced commits
// that answers wait for no longer queue behind them (benchmarks/README.md, 2026-11-30, afternoon).
extension SQLiteStore {
    /// Runs `body`'s statements on `connection` with commits that do not sync the write-ahead log, then
    /// sets the connection back to synced commits, whether `body` threw or not. Call it inside
    /// ``WriteSerializer/run(_:)``, so no other write commits while the setting is relaxed. For one
    /// statement, ``queryDeferringSync(_:_:_:)`` does the same in one call on the thread pool.
    static func deferringSync<T>(_ connection: SQLiteStatementConnection, _ body: () async throws -> T) async throws -> T {
        _ = try await Self.query(connection, SQLiteStatementConnection.deferredSyncPragma, [])
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        _ = try await Self.query(connection, SQLiteStatementConnection.fullSyncPragma, [])
        return try outcome.get()
    }

    /// Runs one statement as ``query(_:_:_:)`` does (again after a pause while another connection holds
    /// the write lock), with a commit that does not sync the write-ahead log; returns its rows and the count
    /// of changed rows. Call it inside ``WriteSerializer/run(_:)``.
    static func queryDeferringSync(
        _ connection: SQLiteStatementConnection, _ sql: String, _ binds: [SQLiteData]
    ) async throws -> (rows: [[SQLiteData]], changes: Int) {
        try await Self.retryingWhileBusy { try await connection.runDeferringSync(sql, binds) }
    }

    /// Runs one statement on the writer, in turn with the other writes, with a commit that does not sync
    /// the write-ahead log; returns its rows and the count of changed rows.
    func runDeferringSync(_ sql: String, _ binds: [SQLiteData]) async throws -> (rows: [[SQLiteData]], changes: Int) {
        let connection = self.writer
        return try await self.writes.run { try await Self.queryDeferringSync(connection, sql, binds) }
    }
}
