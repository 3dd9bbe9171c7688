/// The SQL of ``DeliveryCountStore``, the same on SQLite and PostgreSQL.
public enum DeliveryCountStatements {
    /// The table (migration 8): one row per app, front end, outcome and minute, keyed minute first so
    /// that range reads and purges scan only the minutes they need. `integer` is the 64-bit integer type.
    public static func schema(integer: String) -> [String] {
        [
            """
            CREATE TABLE delivery_counts (
                minute \(integer) NOT NULL,
                app_id TEXT NOT NULL,
                front_end TEXT NOT NULL,
                outcome TEXT NOT NULL,
                count \(integer) NOT NULL,
                PRIMARY KEY (minute, app_id, front_end, outcome)
            )
            """
        ]
    }

    /// Adds to one row; binds minute, app id, front end, outcome, count.
    public static let add = """
        INSERT INTO delivery_counts (minute, app_id, front_end, outcome, count) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (minute, app_id, front_end, outcome) DO UPDATE SET count = delivery_counts.count + excluded.count
        """

    /// The rows of a range of minutes; binds the first minute and the minute after the last.
    public static let select =
        "SELECT app_id, front_end, outcome, minute, count FROM delivery_counts WHERE minute >= $1 AND minute < $2"

    /// The sums of a range of minutes by app, front end and outcome; binds as ``select``.
    public static let selectTotals = """
        SELECT app_id, front_end, outcome, CAST(SUM(count) AS BIGINT) FROM delivery_counts WHERE minute >= $1 AND minute < $2
        GROUP BY app_id, front_end, outcome
        """

    /// Deletes the rows before a minute; binds the minute; returns one row per deleted row.
    public static let purge = "DELETE FROM delivery_counts WHERE minute < $1 RETURNING minute"
}
