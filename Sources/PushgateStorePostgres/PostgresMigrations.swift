import PushgateStore

/// The PostgreSQL schema, version by version.
enum PostgresMigrations {
    /// The advisory lock key that serialises migrations between instances starting together.
    static let advisoryLockKey: Int64 = 0x7075_7368_6761_7465  // "pushgate"

    static let plan = MigrationPlan([
        Migration(
            version: 1,
            name: "devices, outbox, counters",
            statements: [
                """
                CREATE TABLE devices (
                    namespace TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    push_token TEXT NOT NULL,
                    public_key TEXT,
                    attributes TEXT NOT NULL DEFAULT '{}',
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    PRIMARY KEY (namespace, device_id)
                )
                """,
                "CREATE INDEX devices_by_token ON devices (app_id, push_token)",
                """
                CREATE TABLE outbox (
                    id BIGSERIAL PRIMARY KEY,
                    app_id TEXT NOT NULL,
                    push_token TEXT NOT NULL,
                    payload BYTEA NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    not_before BIGINT NOT NULL,
                    lease_owner TEXT,
                    lease_until BIGINT,
                    created_at BIGINT NOT NULL,
                    last_error TEXT
                )
                """,
                "CREATE INDEX outbox_due ON outbox (not_before, id)",
                """
                CREATE TABLE counters (
                    name TEXT PRIMARY KEY,
                    value BIGINT NOT NULL,
                    expires_at BIGINT
                )
                """,
                "CREATE INDEX counters_expiry ON counters (expires_at) WHERE expires_at IS NOT NULL",
            ]
        ),
        Migration(version: 2, name: "invalid tokens", statements: StoreStatements.invalidTokensSchema),
        Migration(version: 3, name: "status server", statements: StatusStoreStatements.schema(blob: "BYTEA", integer: "BIGINT")),
        Migration(version: 4, name: "status seen claims", statements: StatusStoreStatements.seenClaimColumn(blob: "BYTEA")),
        Migration(version: 5, name: "several tokens an outbox entry", statements: StoreStatements.outboxTokensSchema),
    ])

    /// Leases due entries that no other instance holds, oldest due first, as many as hold at most `limit`
    /// tokens together and always the first; binds owner, lease end (ms), now (ms), limit. (An entry holds
    /// at least one token, so the first `limit` due entries are all the candidates.)
    static let claimDue = """
        UPDATE outbox SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
        WHERE id IN (
            SELECT id FROM (
                SELECT id,
                    SUM(token_count) OVER (ORDER BY not_before, id) AS tokens_so_far,
                    ROW_NUMBER() OVER (ORDER BY not_before, id) AS position
                FROM (
                    SELECT id, not_before, token_count FROM outbox
                    WHERE not_before <= $3 AND (lease_until IS NULL OR lease_until <= $3)
                    ORDER BY not_before, id LIMIT $4
                    FOR UPDATE SKIP LOCKED) AS candidates
                ) AS ranked
            WHERE tokens_so_far <= $4 OR position = 1)
        RETURNING \(StoreStatements.outboxColumns)
        """
}
