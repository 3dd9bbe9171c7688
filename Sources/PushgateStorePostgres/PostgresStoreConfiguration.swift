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

    /// Creates a configuration.
    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String?,
        database: String,
        tls: TLSMode = .prefer,
        maximumConnections: Int = 20
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
        self.maximumConnections = maximumConnections
    }
}
