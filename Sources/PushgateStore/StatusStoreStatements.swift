/// The SQL of the Status server's tables, shared by the SQLite and PostgreSQL stores (parameters as in
/// ``StoreStatements``). Key hashes, registrations, ids and secrets are bytes (BLOB / BYTEA); times are
/// milliseconds since 1970.
public enum StatusStoreStatements {
    /// The tables of migration 3; `blob` and `integer` are the database's byte-string and 64-bit types.
    public static func schema(blob: String, integer: String) -> [String] {
        [
            """
            CREATE TABLE status_registrations (
                public_key_hash \(blob) NOT NULL,
                installation_id TEXT NOT NULL,
                version \(integer) NOT NULL,
                registration \(blob),
                PRIMARY KEY (public_key_hash, installation_id)
            )
            """,
            """
            CREATE TABLE status_seen (
                id \(blob) PRIMARY KEY,
                seen_at \(integer) NOT NULL
            )
            """,
            "CREATE INDEX status_seen_by_time ON status_seen (seen_at)",
            """
            CREATE TABLE status_identity (
                id INTEGER PRIMARY KEY,
                secret \(blob) NOT NULL
            )
            """,
        ]
    }

    /// Columns of `status_registrations`, in the order the stores decode them.
    public static let registrationColumns = "public_key_hash, installation_id, version, registration"

    /// One row; binds key hash, installation id.
    public static let selectRegistration =
        "SELECT \(registrationColumns) FROM status_registrations WHERE public_key_hash = $1 AND installation_id = $2"

    /// The registered rows of `count` key hashes; binds the hashes.
    public static func selectRegistrations(count: Int) -> String {
        let placeholders = (0..<count).map { "$\($0 + 1)" }.joined(separator: ", ")
        return "SELECT \(registrationColumns) FROM status_registrations WHERE registration IS NOT NULL AND public_key_hash IN (\(placeholders))"
    }

    /// How many key hashes one ``selectRegistrations(count:)`` takes at most.
    public static let selectRegistrationsChunkSize = 500

    /// Saves a row unless one with the same or a higher version exists; binds the four
    /// ``registrationColumns``; returns a row when saved.
    public static let upsertRegistration = """
        INSERT INTO status_registrations (\(registrationColumns)) VALUES ($1, $2, $3, $4)
        ON CONFLICT (public_key_hash, installation_id) DO UPDATE SET version = excluded.version, registration = excluded.registration
        WHERE status_registrations.version < excluded.version
        RETURNING version
        """

    /// Drops a registration still at a version; binds key hash, installation id, version; returns a row when dropped.
    public static let dropRegistration = """
        UPDATE status_registrations SET registration = NULL
        WHERE public_key_hash = $1 AND installation_id = $2 AND version = $3 AND registration IS NOT NULL
        RETURNING version
        """

    /// The key hashes with a registration.
    public static let selectRegisteredKeyHashes =
        "SELECT DISTINCT public_key_hash FROM status_registrations WHERE registration IS NOT NULL"

    /// The step of migration 4: the claim of the attempt that recorded a seen id (NULL for ids recorded
    /// before it, which no attempt can claim again).
    public static func seenClaimColumn(blob: String) -> [String] {
        ["ALTER TABLE status_seen ADD COLUMN claim \(blob)"]
    }

    /// Records a seen id unless it is recorded; binds id, time (ms), claim; returns the claim stored for the
    /// id, the bound one when it was new. (The no-op update makes a repeat return the stored row.)
    public static let insertSeen =
        "INSERT INTO status_seen (id, seen_at, claim) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET claim = status_seen.claim RETURNING claim"

    /// Forgets ids seen before a time; binds time (ms); returns one row per id.
    public static let pruneSeen = "DELETE FROM status_seen WHERE seen_at < $1 RETURNING seen_at"

    /// The identity.
    public static let selectIdentity = "SELECT secret FROM status_identity WHERE id = 1"

    /// Saves the identity unless one exists; binds the secret.
    public static let insertIdentity = "INSERT INTO status_identity (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING"

    /// A registration version as the stores keep it (a signed 64-bit integer).
    /// - Throws: ``StoreError/invalidConfiguration(_:)`` above `Int64.max`.
    public static func storedVersion(_ version: UInt64) throws -> Int64 {
        guard let stored = Int64(exactly: version) else { throw StoreError.invalidConfiguration("a Status registration version above 2^63 - 1 cannot be stored") }
        return stored
    }
}
