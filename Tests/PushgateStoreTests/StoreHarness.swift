import Foundation
import Logging
import NIOPosix
import PostgresNIO
import SQLiteNIO
import PushgateCore
import PushgateStore
import PushgateStorePostgres
import PushgateStoreSQLite
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// The two store implementations every conformance test runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { self.rawValue }
}

/// A fresh, empty database of one kind: a new SQLite file, or a new PostgreSQL database on the server the
/// test script started (`PUSHGATE_TEST_POSTGRES_URL`).
struct TestDatabase: Sendable {
    let kind: StoreKind
    let sqlitePath: String?
    let postgres: PostgresStoreConfiguration?

    static let logger: Logger = {
        var logger = Logger(label: "pushgate.tests")
        logger.logLevel = .warning
        return logger
    }()

    static func make(_ kind: StoreKind) async throws -> TestDatabase {
        switch kind {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return TestDatabase(kind: kind, sqlitePath: directory.appendingPathComponent("store.sqlite").path, postgres: nil)
        case .postgres:
            let server = try PostgresTestServer.fromEnvironment()
            let name = "pushgate_t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
            try await server.execute("CREATE DATABASE \(name)")
            var configuration = server.configuration
            configuration.database = String(name)
            return TestDatabase(kind: kind, sqlitePath: nil, postgres: configuration)
        }
    }

    /// Opens a store on this database (migrating it).
    func open() async throws -> any PushStore {
        switch self.kind {
        case .sqlite: try await SQLiteStore.open(path: self.sqlitePath!, logger: Self.logger)
        case .postgres: try await PostgresStore.connect(self.postgres!, logger: Self.logger)
        }
    }

    /// Runs `body` while another connection holds what a write to the outbox waits for: SQLite's write
    /// lock (`BEGIN IMMEDIATE`; readers go on in WAL mode), or on PostgreSQL an `EXCLUSIVE` lock on the
    /// table (reads go on, writes and `FOR UPDATE` wait); releases it when `body` returns or throws.
    func holdingOutboxWriteLock<T>(_ body: () async throws -> T) async throws -> T {
        let release: () async throws -> Void
        switch self.kind {
        case .sqlite:
            let connection = try await SQLiteConnection.open(storage: .file(path: self.sqlitePath!))
            _ = try await connection.query("BEGIN IMMEDIATE")
            release = {
                _ = try await connection.query("ROLLBACK")
                try await connection.close()
            }
        case .postgres:
            let connection = try await PostgresTestServer(configuration: self.postgres!).connect()
            _ = try await connection.query("BEGIN", logger: Self.logger)
            _ = try await connection.query("LOCK TABLE outbox IN EXCLUSIVE MODE", logger: Self.logger)
            release = {
                _ = try await connection.query("ROLLBACK", logger: Self.logger)
                try await connection.close()
            }
        }
        let value: T
        do {
            value = try await body()
        } catch {
            try? await release()
            throw error
        }
        try await release()
        return value
    }

    /// Runs raw SQL against this database, outside any store.
    func execute(_ sql: String) async throws {
        switch self.kind {
        case .sqlite:
            let connection = try await SQLiteConnection.open(storage: .file(path: self.sqlitePath!))
            _ = try await connection.query(sql)
            try await connection.close()
        case .postgres:
            try await PostgresTestServer(configuration: self.postgres!).execute(sql)
        }
    }
}

/// The PostgreSQL server the test script started.
struct PostgresTestServer: Sendable {
    var configuration: PostgresStoreConfiguration

    static func fromEnvironment() throws -> PostgresTestServer {
        guard let url = ProcessInfo.processInfo.environment["PUSHGATE_TEST_POSTGRES_URL"],
            let components = URLComponents(string: url), let host = components.host, let user = components.user
        else {
            throw TestSetupError("PUSHGATE_TEST_POSTGRES_URL is not set: run the suite with scripts/test, which starts PostgreSQL")
        }
        return PostgresTestServer(
            configuration: PostgresStoreConfiguration(
                host: host, port: components.port ?? 5432, username: user, password: components.password,
                database: String(components.path.dropFirst()), tls: .disable, maximumConnections: 10
            )
        )
    }

    func execute(_ sql: String) async throws {
        let connection = try await self.connect()
        defer { Task { try? await connection.close() } }
        _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: TestDatabase.logger)
    }

    /// A connection of its own to this server's database.
    func connect() async throws -> PostgresConnection {
        try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: .init(
                host: self.configuration.host, port: self.configuration.port, username: self.configuration.username,
                password: self.configuration.password, database: self.configuration.database, tls: .disable
            ),
            id: 1,
            logger: TestDatabase.logger
        ).get()
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` with `count` stores open on `database` (a fresh one by default), each store running as a
/// service, then shuts them down gracefully as a service group would.
func withStores(
    _ kind: StoreKind,
    on database: TestDatabase? = nil,
    count: Int = 1,
    _ body: @Sendable ([any PushStore]) async throws -> Void
) async throws {
    let database = if let database { database } else { try await TestDatabase.make(kind) }
    // Instances open together, as several gateways starting at once would.
    let opened = try await withThrowingTaskGroup(of: (any PushStore).self) { group in
        for _ in 0..<count { group.addTask { try await database.open() } }
        return try await group.reduce(into: [any PushStore]()) { $0.append($1) }
    }
    try await testGracefulShutdown { trigger in
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in opened {
                group.addTask { try await store.run() }
            }
            do {
                try await body(opened)
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            } catch {
                trigger.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
        }
    }
}

/// Runs `body` with one open store on a fresh database.
func withStore(_ kind: StoreKind, _ body: @Sendable (any PushStore) async throws -> Void) async throws {
    try await withStores(kind, count: 1) { stores in try await body(stores[0]) }
}
