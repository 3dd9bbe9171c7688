@testable import PushgateStoreSQLite
import Testing

/// The outbox INSERT's text against the same text written plainly.
@Suite("SQLite outbox INSERT text")
struct SQLiteOutboxInsertTests {
    static func plain(rows: Int, leased: Bool) -> String {
        let columns = leased
            ? "app_id, front_end, push_token, more_tokens, token_count, payload, not_before, created_at, lease_owner, lease_until, attempts"
            : "app_id, front_end, push_token, more_tokens, token_count, payload, not_before, created_at"
        let row = leased ? "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)" : "(?, ?, ?, ?, ?, ?, ?, ?)"
        return "INSERT INTO outbox (\(columns)) VALUES \(Array(repeating: row, count: rows).joined(separator: ", "))"
    }

    @Test(arguments: [1, 2, 9, 10, 47, 48, 49, 63, 64, 65, 199, 200, 1000])
    func textMatchesThePlainForm(rows: Int) {
        for leased in [false, true] {
            #expect(SQLiteOutboxInsert.sql(rows: rows, leased: leased) == Self.plain(rows: rows, leased: leased))
        }
    }

    /// The longest statement a batch uses is kept prepared: its text is within the cache's limit.
    @Test func theLongestStatementIsShortEnoughToStayPrepared() {
        let longest = SQLiteOutboxInsert.sql(rows: SQLiteOutboxInsert.rowsPerStatement, leased: true)
        #expect(longest.utf8.count <= SQLiteStatementConnection.cachedTextLimit)
    }
}
