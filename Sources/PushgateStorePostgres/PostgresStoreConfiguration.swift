/// Where the PostgreSQL store connects and how many connections it may hold.
public struct PostgresStoreConfiguration: Sendable, Equatable {
    /// How the connection uses TLS, as libpq's `sslmode`.
    public enum TLSMode: String, Sendable, Equatable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS or no connection.
        case require
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The role's password, if any.
    public var password: String?
    /// The database name.
    public var database: String
    /// TLS use.
    public var tls: TLSMode
    /// The most connections one instance keeps open.
    public var maximumConnections: Int
    /// How long a connection may sit unused in the pool before it is closed.
    ///
    /// Short on purpose: each time a connection goes back to the pool, the pool starts a timer of this
    /// length, and a timer's memory stays until its deadline even when the connection is leased again at
    /// once. At a few thousand store calls a second, postgres-nio's default (60 s, and a 30 s keep-alive
    /// timer beside it) held about 75 MiB of timers (benchmarks/README.md, 2026-11-30, night).
    public var idleTimeout: Duration
    /// How long the server lets one statement of the pool's run (`statement_timeout`), and one
    /// transaction sit idle (`idle_in_transaction_session_timeout`): a call the store gave up on at its
    /// own deadline then gives its connection back instead of holding it for good (a lock that is never
    /// released, a query that never ends). Longer than any store call's deadline.
    public var statementTimeout: Duration
    /// How long start-up waits, in all, for what a migration must lock: the schema (another instance
    /// migrating) and each table it changes (queries of running instances). Each lock is waited for at
    /// most ``PostgresMigrator/lockTimeout`` at a time, so running instances' queries never queue behind a
    /// migration for longer; then the attempt starts again.
    public var migrationWait: Duration = .seconds(600)

    /// Creates a configuration.
    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String?,
        database: String,
        tls: TLSMode = .prefer,
        maximumConnections: Int = 20,
        idleTimeout: Duration = .seconds(10),
        statementTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
        self.maximumConnections = maximumConnections
        self.idleTimeout = idleTimeout
        self.statementTimeout = statementTimeout
    }

    /// The statement timeout for store calls that give up after `callTimeout`: twice that, and at least
    /// 30 s.
    public static func statementTimeout(forCallsOf callTimeout: Duration) -> Duration {
        max(.seconds(30), callTimeout * 2)
    }
}
