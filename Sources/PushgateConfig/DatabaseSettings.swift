import Foundation
import PushgateCore

/// The `database` section: which store to use.
public enum DatabaseSettings: Sendable, Equatable {
    /// An SQLite file (`database.url: sqlite:PATH`); the default is `sqlite:pushgate.sqlite`.
    case sqlite(path: String)
    /// A PostgreSQL server (`database.url: postgres://user:password@host:port/db?sslmode=…`).
    case postgres(PostgresSettings)

    /// The embedded default: `pushgate.sqlite` in the working directory.
    public static let `default` = DatabaseSettings.sqlite(path: "pushgate.sqlite")

    /// The settings for display, with any password masked.
    public var displayDescription: String {
        switch self {
        case .sqlite(let path): "sqlite (\(path))"
        case .postgres(let settings):
            "postgres (\(settings.username)@\(settings.host):\(settings.port)/\(settings.database), sslmode=\(settings.sslMode), max_connections=\(settings.maximumConnections))"
        }
    }

    static let knownKeys: Set<String> = ["url", "max_connections", "timeout"]

    init(_ section: ConfigSection, warnings: inout [String]) throws {
        guard let url = try section.string("url") else {
            // Sygnal's legacy `database: {name: sqlite3, args: …}` section: ignored, as Sygnal does.
            if !section.map.keys.isEmpty {
                warnings.append("\(section.path): no url given; the legacy Sygnal database settings are ignored and the default \(Self.default.displayDescription) is used")
            }
            self = .default
            return
        }
        let maximumConnections = try section.int("max_connections", in: 1...1000) ?? 20
        self = try Self.parse(url: url, key: section.keyPath("url"), maximumConnections: maximumConnections)
        warnings += section.unknownKeys(known: Self.knownKeys).map { "unknown key \($0) (ignored)" }
        // A misspelt `sslmode` (`ssl_mode`) would leave TLS at `prefer` without a word.
        if case .postgres = self, let items = URLComponents(string: url)?.queryItems {
            for name in Set(items.map(\.name)).subtracting(["sslmode"]).sorted() {
                warnings.append("\(section.keyPath("url")): parameter \(name) is not read (ignored; Pushgate reads sslmode only)")
            }
        }
    }

    /// Parses a database URL.
    /// - Throws: ``ConfigurationError`` naming `key` when the URL is not `sqlite:PATH` or `postgres://…`.
    public static func parse(url: String, key: String = "database.url", maximumConnections: Int = 20) throws -> DatabaseSettings {
        if url.hasPrefix("sqlite:") {
            var path = String(url.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { throw ConfigurationError(key: key, "sqlite: needs a file path, as in sqlite:pushgate.sqlite") }
            return .sqlite(path: path)
        }
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            throw ConfigurationError(key: key, "must start with sqlite: or postgres://")
        }
        guard let components = URLComponents(string: url), let host = components.encodedHost, !host.isEmpty else {
            throw ConfigurationError(key: key, "is not a valid postgres:// URL (postgres://user:password@host:port/database)")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard TCPPort.connectable.contains(components.port ?? 5432) else {
            throw ConfigurationError(key: key, "has a port outside 1–65535")
        }
        guard let username = components.user, !username.isEmpty, !database.isEmpty else {
            throw ConfigurationError(key: key, "must name a user and a database, as in postgres://user:password@host:5432/pushgate")
        }
        var settings = PostgresSettings(
            host: host, port: components.port ?? 5432, username: username.removingPercentEncoding ?? username,
            password: components.password.map { $0.removingPercentEncoding ?? $0 }, database: database,
            sslMode: .prefer, maximumConnections: maximumConnections
        )
        if let mode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value {
            switch mode {
            case "disable": settings.sslMode = .disable
            case "allow", "prefer": settings.sslMode = .prefer
            case "require", "verify-ca", "verify-full": settings.sslMode = .require
            default: throw ConfigurationError(key: key, "sslmode must be disable, prefer or require, found \(mode)")
            }
        }
        return .postgres(settings)
    }
}

/// A PostgreSQL server to connect to.
public struct PostgresSettings: Sendable, Equatable {
    /// TLS use, as libpq's `sslmode`.
    public enum SSLMode: String, Sendable, Equatable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var sslMode: SSLMode
    /// Connections per instance (`database.max_connections`, default 20).
    public var maximumConnections: Int
}
