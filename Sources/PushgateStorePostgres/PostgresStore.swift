import Foundation
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import PushgateCore
public import PushgateStore
import ServiceLifecycle

/// The store for deployments of several instances: a pooled PostgreSQL client.
///
/// Instances may share one database. Migrations take an advisory lock, and outbox claims skip rows
/// another instance holds (`FOR UPDATE SKIP LOCKED`), so no entry is leased twice.
public final class PostgresStore: PushStore {
    public let kind = "postgres"
    let client: PostgresClient
    let logger: Logger

    private init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Brings the database's schema up to date over a connection of its own, then returns a store whose
    /// pool starts when the store is run.
    /// - Throws: ``StoreError`` when the server cannot be reached or the schema is newer than this build.
    public static func connect(_ configuration: PostgresStoreConfiguration, logger: Logger) async throws -> PostgresStore {
        let logger = PostgresNIOLogger.wrapping(logger)
        do {
            try await Self.migrate(configuration, logger: logger)
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresTransactionError where error.closureError is StoreError {
            throw error.closureError!
        } catch {
            let reason = PostgresStoreErrorText.text(for: error)
            throw StoreError.unavailable("cannot migrate the PostgreSQL database \(configuration.database) at \(configuration.host):\(configuration.port): \(reason)")
        }
        let client = PostgresClient(configuration: Self.clientConfiguration(configuration), backgroundLogger: logger)
        return PostgresStore(client: client, logger: logger)
    }

    /// The pool's settings: at most ``PostgresStoreConfiguration/maximumConnections`` connections, none
    /// kept open without demand, each closed after ``PostgresStoreConfiguration/idleTimeout`` unused, and no
    /// keep-alive query. postgres-nio's keep-alive query runs on a connection idle for 30 s, which a
    /// connection closed after the idle timeout (10 s by default) does not reach; its timer, started at
    /// every return to the pool, only cost memory. A dead connection is found by the call that uses it,
    /// within the store's deadline.
    static func clientConfiguration(_ configuration: PostgresStoreConfiguration) -> PostgresClient.Configuration {
        var clientConfiguration = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: Self.clientTLS(configuration.tls)
        )
        clientConfiguration.options.minimumConnections = 0
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        clientConfiguration.options.connectionIdleTimeout = configuration.idleTimeout
        clientConfiguration.options.keepAliveBehavior = nil
        let milliseconds = String(configuration.statementTimeout.wholeMilliseconds)
        clientConfiguration.options.additionalStartupParameters = [
            ("statement_timeout", milliseconds), ("idle_in_transaction_session_timeout", milliseconds),
        ]
        return clientConfiguration
    }

    static func clientTLS(_ mode: PostgresStoreConfiguration.TLSMode) -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    static func migrate(_ configuration: PostgresStoreConfiguration, logger: Logger) async throws {
        let tls: PostgresConnection.Configuration.TLS
        switch configuration.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        let connection = try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: .init(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: tls
            ),
            id: 0,
            logger: logger
        ).get()
        do {
            try await PostgresMigrator(connection: connection, wait: configuration.migrationWait, logger: logger).run()
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// Runs the connection pool until graceful shutdown.
    public func run() async {
        await self.client.run()
    }

    /// What postgres-nio threw, as ``PostgresStoreErrorText`` words it (no row values).
    public func storeError(for error: any Error) -> StoreError {
        PostgresStoreErrorText.storeError(for: error)
    }

    public func ping() async throws {
        _ = try await self.rows("SELECT 1", PostgresBindings()).decode(Int.self).all()
    }

    // MARK: Helpers

    func rows(_ sql: String, _ binds: PostgresBindings) async throws -> PostgresRowSequence {
        try await self.client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: self.logger)
    }

    func scalar(_ sql: String, _ binds: PostgresBindings) async throws -> Int {
        guard let value = try await self.rows(sql, binds).decode(Int.self).all().first else {
            throw StoreError.corruptRow("expected a number from the database")
        }
        return value
    }

    static func binds(_ values: String...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values { binds.append(value) }
        return binds
    }

    static func binds(_ device: DeviceRegistration) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 8)
        Self.append(device, to: &binds)
        return binds
    }

    static func append(_ device: DeviceRegistration, to binds: inout PostgresBindings) {
        binds.append(device.namespace)
        binds.append(device.deviceID)
        binds.append(device.appID)
        binds.append(device.pushToken)
        binds.append(device.publicKey)
        binds.append(DeviceAttributesCoding.encode(device.attributes))
        binds.append(device.createdAt.millisecondsSince1970)
        binds.append(device.updatedAt.millisecondsSince1970)
    }
}

extension PostgresStore: CustomStringConvertible {
    public var description: String { "PostgresStore" }
}
