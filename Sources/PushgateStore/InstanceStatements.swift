/// The SQL of ``InstanceStore``, the same on SQLite and PostgreSQL. Times are milliseconds since 1970.
public enum InstanceStatements {
    /// The table (migration 10): one row per instance, keyed by its name.
    public static func schema(integer: String) -> [String] {
        [
            """
            CREATE TABLE instances (
                name TEXT PRIMARY KEY,
                last_seen \(integer) NOT NULL,
                version TEXT NOT NULL,
                started \(integer) NOT NULL
            )
            """
        ]
    }

    /// Creates or replaces an instance's row; binds name, last seen, version, started.
    public static let record = """
        INSERT INTO instances (name, last_seen, version, started) VALUES ($1, $2, $3, $4)
        ON CONFLICT (name) DO UPDATE SET last_seen = excluded.last_seen, version = excluded.version, started = excluded.started
        """

    /// The rows seen at or after a time; binds the time.
    public static let selectSeenSince = "SELECT name, last_seen, version, started FROM instances WHERE last_seen >= $1 ORDER BY name"

    /// Deletes the rows last seen before a time; binds the time; returns one row per deleted row.
    public static let purge = "DELETE FROM instances WHERE last_seen < $1 RETURNING name"
}
