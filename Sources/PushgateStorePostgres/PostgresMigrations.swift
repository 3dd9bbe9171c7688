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
        Migration(version: 6, name: "outbox claims shared between apps", statements: StoreStatements.outboxDueByAppSchema),
        Migration(version: 7, name: "outbox claims shared between front ends", statements: StoreStatements.outboxLanesSchema),
        Migration(version: 8, name: "delivery counts", statements: DeliveryCountStatements.schema(integer: "BIGINT")),
        Migration(version: 9, name: "delivery counts by minute", statements: DeliveryCountStatements.byMinuteSchema),
        Migration(version: 10, name: "instances", statements: InstanceStatements.schema(integer: "BIGINT")),
    ])

    /// Leases due entries shared between apps and their front ends (see ``StoreStatements/claimDueOutboxEntries(_:)``).
    static let claimDue = StoreStatements.claimDueOutboxEntries(.postgres)
}
