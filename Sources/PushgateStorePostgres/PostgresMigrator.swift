import Foundation
import Logging
import PostgresNIO
import PushgateCore
import PushgateStore

/// Brings a database's schema up to date over one connection, in one transaction, without holding up the
/// instances that run on it: every lock is waited for at most ``lockTimeout`` (the schema's advisory lock,
/// held by an instance migrating; a table that a running query reads), and then the attempt is rolled
/// back and made again a second later, for at most the configured wait in all. A running instance's
/// store calls, which give up after a few seconds, are thus never queued behind a migration waiting for
/// a lock (PostgreSQL queues later lock requests behind it).
struct PostgresMigrator {
    /// The longest one statement of a migration waits for a lock (`lock_timeout`).
    static let lockTimeout = "2s"
    /// The longest one statement of a migration runs (`statement_timeout`): a migration that rebuilds an
    /// index of a large table may take minutes, but not for ever.
    static let statementTimeout = "30min"

    let connection: PostgresConnection
    /// How long to keep trying, in all.
    let wait: Duration
    let logger: Logger

    /// What an attempt found.
    private enum Attempt {
        case done
        /// A lock was not to be had; what held it, in words.
        case busy(String)
    }

    /// Migrates, trying again while locks are held elsewhere.
    /// - Throws: ``StoreError/unavailable(_:)`` when the locks stayed held for the whole wait, or what the
    ///   migration threw.
    func run() async throws {
        let started = ContinuousClock.now
        var lastNotice: ContinuousClock.Instant?
        while true {
            let busy: String
            switch try await self.attempt() {
            case .done: return
            case .busy(let what): busy = what
            }
            let waited = ContinuousClock.now - started
            guard waited < self.wait else {
                throw StoreError.unavailable("cannot migrate the database: \(busy) for \(waited.components.seconds) s")
            }
            if lastNotice.map({ ContinuousClock.now - $0 >= .seconds(10) }) ?? true {
                lastNotice = .now
                self.logger.notice("migration waiting", metadata: ["store": "postgres", "for": "\(busy)"])
            }
            try await Task.sleep(for: .seconds(1))
        }
    }

    private func attempt() async throws -> Attempt {
        do {
            return try await self.connection.withTransaction(logger: self.logger) { connection -> Attempt in
                _ = try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = '\(Self.lockTimeout)'"), logger: self.logger)
                _ = try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL statement_timeout = '\(Self.statementTimeout)'"), logger: self.logger)
                var locked = false
                for try await value in try await connection.query(
                    "SELECT pg_try_advisory_xact_lock(\(PostgresMigrations.advisoryLockKey))", logger: self.logger
                ).decode(Bool.self) {
                    locked = value
                }
                guard locked else { return .busy("another instance is migrating the schema") }
                _ = try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.createMigrationsTable), logger: self.logger)
                var current = 0
                for try await version in try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.selectSchemaVersion), logger: self.logger)
                    .decode(Int?.self)
                {
                    current = version ?? 0
                }
                for migration in try PostgresMigrations.plan.pending(after: current) {
                    for statement in migration.statements {
                        _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                    }
                    var binds = PostgresBindings()
                    binds.append(migration.version)
                    binds.append(migration.name)
                    binds.append(Date().millisecondsSince1970)
                    _ = try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.recordMigration, binds: binds), logger: self.logger)
                    self.logger.info("applied migration", metadata: ["store": "postgres", "version": "\(migration.version)"])
                }
                return .done
            }
        } catch let error as PostgresTransactionError {
            // lock_not_available: a table the migration changes is in use; the transaction rolled back.
            if let failure = error.closureError as? PSQLError, failure.serverInfo?[.sqlState] == "55P03" {
                return .busy("a table it changes is locked by running queries")
            }
            throw error
        }
    }
}
