import Synchronization

/// The text of the outbox's multi-row INSERT for a number of rows, `RETURNING id`: five anonymous
/// parameters a row, seven with a lease (its owner and end bound again on every row).
///
/// Anonymous parameters take SQLite's parser no look-up, where a numbered parameter used again (`?501` on
/// every row for a shared lease) was searched for in the list of all earlier ones: quadratic in the rows,
/// 1.6 % of a 100-token gorush request's instructions. The texts for the smaller row counts, which most
/// writes have, are kept once made.
enum SQLiteOutboxInsert {
    /// Row counts up to this are kept once made (both forms together hold about 70 KB).
    static let cachedRows = 64

    private static let cache = Mutex<[Int: String]>([:])

    /// The statement for `rows` rows (at least one).
    static func sql(rows: Int, leased: Bool) -> String {
        precondition(rows > 0, "an INSERT has at least one row")
        guard rows <= Self.cachedRows else { return Self.make(rows: rows, leased: leased) }
        let key = leased ? -rows : rows
        if let cached = Self.cache.withLock({ $0[key] }) { return cached }
        let made = Self.make(rows: rows, leased: leased)
        Self.cache.withLock { $0[key] = made }
        return made
    }

    /// Builds the statement.
    static func make(rows: Int, leased: Bool) -> String {
        let head = leased
            ? "INSERT INTO outbox (app_id, push_token, payload, not_before, created_at, lease_owner, lease_until, attempts) VALUES "
            : "INSERT INTO outbox (app_id, push_token, payload, not_before, created_at) VALUES "
        let row = leased ? "(?, ?, ?, ?, ?, ?, ?, 1)" : "(?, ?, ?, ?, ?)"
        var sql = head
        sql.reserveCapacity(head.utf8.count + rows * (row.utf8.count + 2) + 16)
        for index in 0..<rows {
            if index > 0 { sql += ", " }
            sql += row
        }
        return sql + " RETURNING id"
    }
}
