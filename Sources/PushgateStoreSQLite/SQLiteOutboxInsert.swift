/// The text of the outbox's multi-row INSERT for a number of rows: eight anonymous parameters a row, ten
/// with a lease (its owner and end bound again on every row). It has no `RETURNING id` (a temporary
/// table and a result row for each id): the ids are the last inserted rowid and the ones before it.
///
/// Anonymous parameters take SQLite's parser no look-up, where a numbered parameter used again (`?501` on
/// every row for a shared lease) was searched for in the list of all earlier ones: quadratic in the rows,
/// 1.6 % of a 100-token gorush request's instructions. The text is appends of constant strings, no
/// interpolation.
enum SQLiteOutboxInsert {
    /// The most rows of one statement. Its text stays under the prepared-statement cache's limit
    /// (``SQLiteStatementConnection/cachedTextLimit``), so a batch of any size reuses prepared statements:
    /// a 100-row INSERT, longer than that, was parsed afresh every time (about 3,500 instructions a token
    /// of a 100-token gorush notification).
    static let rowsPerStatement = 48

    /// The statement for `rows` rows (at least one).
    static func sql(rows: Int, leased: Bool) -> String {
        precondition(rows > 0, "an INSERT has at least one row")
        let head = leased
            ? "INSERT INTO outbox (app_id, front_end, push_token, more_tokens, token_count, payload, not_before, created_at, lease_owner, lease_until, attempts) VALUES "
            : "INSERT INTO outbox (app_id, front_end, push_token, more_tokens, token_count, payload, not_before, created_at) VALUES "
        let row = leased ? "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)" : "(?, ?, ?, ?, ?, ?, ?, ?)"
        var sql = head
        sql.reserveCapacity(head.utf8.count + rows * (row.utf8.count + 2) + 16)
        for index in 0..<rows {
            if index > 0 { sql += ", " }
            sql += row
        }
        return sql
    }
}
