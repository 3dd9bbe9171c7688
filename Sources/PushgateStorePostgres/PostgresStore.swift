public import Foundation
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
    private let client: PostgresClient
    private let logger: Logger

    private init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Brings the database's schema up to date over a connection of its own, then returns a store whose
    /// pool starts when the store is run.
    /// - Throws: ``StoreError`` when the server cannot be reached or the schema is newer than this build.
    public static func connect(_ configuration: PostgresStoreConfiguration, logger: Logger) async throws -> PostgresStore {
        do {
            try await Self.migrate(configuration, logger: logger)
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresTransactionError {
            if let storeError = error.closureError as? StoreError { throw storeError }
            throw StoreError.unavailable("cannot migrate the PostgreSQL database \(configuration.database) at \(configuration.host):\(configuration.port): \(String(reflecting: error))")
        } catch {
            throw StoreError.unavailable("cannot migrate the PostgreSQL database \(configuration.database) at \(configuration.host):\(configuration.port): \(String(reflecting: error))")
        }
        var clientConfiguration = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, database: configuration.database, tls: Self.clientTLS(configuration.tls)
        )
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        return PostgresStore(client: client, logger: logger)
    }

    private static func clientTLS(_ mode: PostgresStoreConfiguration.TLSMode) -> PostgresClient.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
        }
    }

    private static func migrate(_ configuration: PostgresStoreConfiguration, logger: Logger) async throws {
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
            try await connection.withTransaction(logger: logger) { connection in
                _ = try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresMigrations.advisoryLockKey))", logger: logger)
                _ = try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.createMigrationsTable), logger: logger)
                var current = 0
                for try await version in try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.selectSchemaVersion), logger: logger)
                    .decode(Int?.self)
                {
                    current = version ?? 0
                }
                for migration in try PostgresMigrations.plan.pending(after: current) {
                    for statement in migration.statements {
                        _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    var binds = PostgresBindings()
                    binds.append(migration.version)
                    binds.append(migration.name)
                    binds.append(Date().millisecondsSince1970)
                    _ = try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.recordMigration, binds: binds), logger: logger)
                    logger.info("applied migration", metadata: ["store": "postgres", "version": "\(migration.version)"])
                }
            }
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

    public func ping() async throws {
        _ = try await self.rows("SELECT 1", PostgresBindings()).decode(Int.self).all()
    }

    // MARK: Devices

    public func saveDevice(_ device: DeviceRegistration) async throws {
        _ = try await self.rows(StoreStatements.upsertDevice, Self.binds(device))
    }

    public func saveDevices(_ devices: [DeviceRegistration]) async throws {
        let unique = devices.keepingLastPerDevice()
        guard !unique.isEmpty else { return }
        do {
            try await self.client.withTransaction(logger: self.logger) { connection in
                for chunk in unique.chunked(by: StoreStatements.upsertDevicesChunkSize) {
                    var binds = PostgresBindings(capacity: chunk.count * 8)
                    for device in chunk { Self.append(device, to: &binds) }
                    _ = try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.upsertDevices(count: chunk.count), binds: binds), logger: self.logger)
                }
            }
        } catch let error as PSQLError {
            throw StoreError.unavailable("PostgreSQL: \(String(reflecting: error))")
        }
    }

    public func insertDeviceIfAbsent(_ device: DeviceRegistration) async throws -> Bool {
        try await !self.rows(StoreStatements.insertDeviceIfAbsent, Self.binds(device)).decode(String.self).all().isEmpty
    }

    public func device(namespace: String, deviceID: String) async throws -> DeviceRegistration? {
        let rows = try await self.rows(StoreStatements.selectDevice, Self.binds(namespace, deviceID))
            .decode((String, String, String, String, String?, String, Int64, Int64).self).all()
        return try rows.first.map(Self.decodeDevice)
    }

    private static func decodeDevice(_ row: (String, String, String, String, String?, String, Int64, Int64)) throws -> DeviceRegistration {
        DeviceRegistration(
            namespace: row.0, deviceID: row.1, appID: row.2, pushToken: row.3, publicKey: row.4,
            attributes: try DeviceAttributesCoding.decode(row.5),
            createdAt: Date(millisecondsSince1970: row.6), updatedAt: Date(millisecondsSince1970: row.7)
        )
    }

    public func devices(namespace: String, deviceIDs: [String]) async throws -> [DeviceRegistration] {
        var found: [DeviceRegistration] = []
        for chunk in Array(Set(deviceIDs)).chunked(by: StoreStatements.selectDevicesChunkSize) {
            var binds = PostgresBindings(capacity: chunk.count + 1)
            binds.append(namespace)
            for id in chunk { binds.append(id) }
            found += try await self.rows(StoreStatements.selectDevices(count: chunk.count), binds)
                .decode((String, String, String, String, String?, String, Int64, Int64).self).all()
                .map(Self.decodeDevice)
        }
        return found
    }

    public func deleteDevice(namespace: String, deviceID: String) async throws -> Bool {
        try await !self.rows(StoreStatements.deleteDevice, Self.binds(namespace, deviceID)).decode(String.self).all().isEmpty
    }

    public func deleteDevices(appID: String, pushToken: String) async throws -> Int {
        try await self.rows(StoreStatements.deleteDevicesByToken, Self.binds(appID, pushToken)).decode(String.self).all().count
    }

    public func deviceCount(namespace: String) async throws -> Int {
        try await self.scalar(StoreStatements.countDevices, Self.binds(namespace))
    }

    // MARK: Outbox

    public func enqueue(_ messages: [OutboxMessage], leasedTo lease: OutboxLease?) async throws -> [Int64] {
        guard !messages.isEmpty else { return [] }
        let now = Date().millisecondsSince1970
        do {
            return try await self.client.withTransaction(logger: self.logger) { connection in
                var ids: [Int64] = []
                ids.reserveCapacity(messages.count)
                for chunk in messages.chunked(by: 1000) {
                    // A lease's owner and end are two parameters every row shares.
                    var sql = lease == nil
                        ? "INSERT INTO outbox (app_id, push_token, more_tokens, token_count, payload, not_before, created_at) VALUES "
                        : "INSERT INTO outbox (app_id, push_token, more_tokens, token_count, payload, not_before, created_at, lease_owner, lease_until, attempts) VALUES "
                    var binds = PostgresBindings(capacity: chunk.count * 7 + 2)
                    let shared = chunk.count * 7
                    for (index, message) in chunk.enumerated() {
                        let base = index * 7
                        sql += index == 0 ? "(" : ", ("
                        sql += "$\(base + 1), $\(base + 2), $\(base + 3), $\(base + 4), $\(base + 5), $\(base + 6), $\(base + 7)"
                        sql += lease == nil ? ")" : ", $\(shared + 1), $\(shared + 2), 1)"
                        let tokens = OutboxTokenColumns(message.pushTokens)
                        binds.append(message.appID)
                        binds.append(tokens.first)
                        binds.append(tokens.more)
                        binds.append(tokens.count)
                        binds.append(ByteBuffer(bytes: message.payload))
                        binds.append(message.notBefore.millisecondsSince1970)
                        binds.append(now)
                    }
                    if let lease {
                        binds.append(lease.owner)
                        binds.append(lease.until.millisecondsSince1970)
                    }
                    let query = PostgresQuery(unsafeSQL: sql + " RETURNING id", binds: binds)
                    // BIGSERIAL ids rise in insertion order within the transaction.
                    ids += try await connection.query(query, logger: self.logger).decode(Int64.self).all().sorted()
                }
                return ids
            }
        } catch let error as PSQLError {
            throw StoreError.unavailable("PostgreSQL: \(String(reflecting: error))")
        }
    }

    public func claimDue(now: Date, limit: Int, leaseFor lease: Duration, owner: String) async throws -> [OutboxEntry] {
        let nowMS = now.millisecondsSince1970
        var binds = PostgresBindings()
        binds.append(owner)
        binds.append(nowMS + lease.wholeMilliseconds)
        binds.append(nowMS)
        binds.append(Int64(limit))
        let rows = try await self.rows(PostgresMigrations.claimDue, binds)
            .decode((Int64, String, String, ByteBuffer, Int, Int64, Int64, String?, String?).self).all()
        return try rows.map { row in
            OutboxEntry(
                id: row.0,
                message: OutboxMessage(
                    appID: row.1, pushTokens: try OutboxTokenColumns.tokens(first: row.2, more: row.8), payload: Array(buffer: row.3),
                    notBefore: Date(millisecondsSince1970: row.5)
                ),
                attempts: row.4, createdAt: Date(millisecondsSince1970: row.6), lastError: row.7
            )
        }.sorted { ($0.message.notBefore, $0.id) < ($1.message.notBefore, $1.id) }
    }

    public func complete(id: Int64, owner: String) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(id)
        binds.append(owner)
        return try await !self.rows(StoreStatements.completeOutboxEntry, binds).decode(Int64.self).all().isEmpty
    }

    public func complete(ids: [Int64], owner: String) async throws -> Int {
        var removed = 0
        for chunk in ids.chunked(by: 1000) {
            var binds = PostgresBindings(capacity: chunk.count + 1)
            binds.append(owner)
            for id in chunk { binds.append(id) }
            removed += try await self.rows(StoreStatements.completeOutboxEntries(count: chunk.count), binds).decode(Int64.self).all().count
        }
        return removed
    }

    public func reschedule(_ retries: [OutboxRetry], owner: String) async throws -> Int {
        var released = 0
        for chunk in retries.chunked(by: StoreStatements.rescheduleChunkSize) {
            var binds = PostgresBindings(capacity: 6 * chunk.count + 1)
            for retry in chunk {
                let remaining = retry.remainingTokens.map(OutboxTokenColumns.init)
                binds.append(retry.id)
                binds.append(retry.notBefore.millisecondsSince1970)
                binds.append(retry.error)
                binds.append(remaining?.first)
                binds.append(remaining?.more)
                binds.append(remaining?.count)
            }
            binds.append(owner)
            released += try await self.rows(StoreStatements.rescheduleOutboxEntries(count: chunk.count), binds).decode(Int64.self).all().count
        }
        return released
    }

    public func pendingCount() async throws -> Int {
        try await self.scalar(StoreStatements.countOutbox, PostgresBindings())
    }

    // MARK: Counters

    public func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64 {
        var binds = PostgresBindings()
        binds.append(name)
        binds.append(amount)
        binds.append(expiresAt?.millisecondsSince1970)
        binds.append(now.millisecondsSince1970)
        return Int64(try await self.scalar(StoreStatements.incrementCounter, binds))
    }

    public func incrementCounters(_ names: [String], by amount: Int64, expiresAt: Date?, now: Date) async throws {
        guard !names.isEmpty else { return }
        do {
            try await self.client.withTransaction(logger: self.logger) { connection in
                for name in names {
                    var binds = PostgresBindings(capacity: 4)
                    binds.append(name)
                    binds.append(amount)
                    binds.append(expiresAt?.millisecondsSince1970)
                    binds.append(now.millisecondsSince1970)
                    _ = try await connection.query(PostgresQuery(unsafeSQL: StoreStatements.incrementCounter, binds: binds), logger: self.logger)
                }
            }
        } catch let error as PSQLError {
            throw StoreError.unavailable("PostgreSQL: \(String(reflecting: error))")
        }
    }

    public func counterValue(_ name: String, now: Date) async throws -> Int64 {
        var binds = Self.binds(name)
        binds.append(now.millisecondsSince1970)
        return try await self.rows(StoreStatements.selectCounter, binds).decode(Int64.self).all().first ?? 0
    }

    public func counterValues(_ names: [String], now: Date) async throws -> [String: Int64] {
        var values: [String: Int64] = [:]
        for chunk in Array(Set(names)).chunked(by: StoreStatements.selectDevicesChunkSize) {
            var binds = PostgresBindings(capacity: chunk.count + 1)
            binds.append(now.millisecondsSince1970)
            for name in chunk { binds.append(name) }
            for (name, value) in try await self.rows(StoreStatements.selectCounters(count: chunk.count), binds).decode((String, Int64).self).all() {
                values[name] = value
            }
        }
        return values
    }

    public func purgeExpiredCounters(now: Date) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(now.millisecondsSince1970)
        return try await self.rows(StoreStatements.purgeCounters, binds).decode(String.self).all().count
    }

    // MARK: Invalid tokens

    public func recordInvalidToken(_ record: InvalidTokenRecord) async throws {
        var binds = Self.binds(record.appID, record.pushToken, record.reason)
        binds.append(record.recordedAt.millisecondsSince1970)
        _ = try await self.rows(StoreStatements.upsertInvalidToken, binds)
    }

    public func invalidToken(appID: String, pushToken: String) async throws -> InvalidTokenRecord? {
        try await self.decodeInvalidTokens(self.rows(StoreStatements.selectInvalidToken, Self.binds(appID, pushToken))).first
    }

    public func clearInvalidToken(appID: String, pushToken: String) async throws -> Bool {
        try await !self.rows(StoreStatements.deleteInvalidToken, Self.binds(appID, pushToken)).decode(String.self).all().isEmpty
    }

    public func invalidTokens(since: Date, limit: Int) async throws -> [InvalidTokenRecord] {
        var binds = PostgresBindings()
        binds.append(since.millisecondsSince1970)
        binds.append(Int64(limit))
        return try await self.decodeInvalidTokens(self.rows(StoreStatements.selectInvalidTokensSince, binds))
    }

    private func decodeInvalidTokens(_ rows: PostgresRowSequence) async throws -> [InvalidTokenRecord] {
        try await rows.decode((String, String, String, Int64).self).all().map { row in
            InvalidTokenRecord(appID: row.0, pushToken: row.1, reason: row.2, recordedAt: Date(millisecondsSince1970: row.3))
        }
    }

    // MARK: Status server

    public func statusRegistration(publicKeyHash: [UInt8], installationID: String) async throws -> StatusRegistrationRecord? {
        var binds = PostgresBindings(capacity: 2)
        binds.append(ByteBuffer(bytes: publicKeyHash))
        binds.append(installationID)
        return try await self.decodeStatusRegistrations(self.rows(StatusStoreStatements.selectRegistration, binds)).first
    }

    public func statusRegistrations(publicKeyHashes: [[UInt8]]) async throws -> [StatusRegistrationRecord] {
        var found: [StatusRegistrationRecord] = []
        for chunk in Array(Set(publicKeyHashes)).chunked(by: StatusStoreStatements.selectRegistrationsChunkSize) {
            var binds = PostgresBindings(capacity: chunk.count)
            for hash in chunk { binds.append(ByteBuffer(bytes: hash)) }
            found += try await self.decodeStatusRegistrations(self.rows(StatusStoreStatements.selectRegistrations(count: chunk.count), binds))
        }
        return found
    }

    public func saveStatusRegistration(_ record: StatusRegistrationRecord) async throws -> Bool {
        var binds = PostgresBindings(capacity: 4)
        binds.append(ByteBuffer(bytes: record.publicKeyHash))
        binds.append(record.installationID)
        binds.append(try StatusStoreStatements.storedVersion(record.version))
        if let registration = record.registration { binds.append(ByteBuffer(bytes: registration)) } else { binds.appendNull() }
        return try await !self.rows(StatusStoreStatements.upsertRegistration, binds).decode(Int64.self).all().isEmpty
    }

    public func dropStatusRegistration(publicKeyHash: [UInt8], installationID: String, version: UInt64) async throws -> Bool {
        var binds = PostgresBindings(capacity: 3)
        binds.append(ByteBuffer(bytes: publicKeyHash))
        binds.append(installationID)
        binds.append(try StatusStoreStatements.storedVersion(version))
        return try await !self.rows(StatusStoreStatements.dropRegistration, binds).decode(Int64.self).all().isEmpty
    }

    public func statusRegisteredKeyHashes() async throws -> [[UInt8]] {
        try await self.rows(StatusStoreStatements.selectRegisteredKeyHashes, PostgresBindings()).decode(ByteBuffer.self).all().map { Array(buffer: $0) }
    }

    public func markStatusMessageSeen(_ id: [UInt8], claim: [UInt8], seenAt: Date) async throws -> Bool {
        var binds = PostgresBindings(capacity: 3)
        binds.append(ByteBuffer(bytes: id))
        binds.append(seenAt.millisecondsSince1970)
        binds.append(ByteBuffer(bytes: claim))
        let stored = try await self.rows(StatusStoreStatements.insertSeen, binds).decode(ByteBuffer?.self).all()
        return stored.first.flatMap { $0 }.map { Array(buffer: $0) } == claim
    }

    public func pruneStatusMessagesSeen(before cutoff: Date) async throws -> Int {
        var binds = PostgresBindings(capacity: 1)
        binds.append(cutoff.millisecondsSince1970)
        return try await self.rows(StatusStoreStatements.pruneSeen, binds).decode(Int64.self).all().count
    }

    public func statusIdentity() async throws -> [UInt8]? {
        try await self.rows(StatusStoreStatements.selectIdentity, PostgresBindings()).decode(ByteBuffer.self).all().first.map { Array(buffer: $0) }
    }

    public func saveStatusIdentityIfAbsent(_ secret: [UInt8]) async throws -> [UInt8] {
        var binds = PostgresBindings(capacity: 1)
        binds.append(ByteBuffer(bytes: secret))
        _ = try await self.rows(StatusStoreStatements.insertIdentity, binds).decode(Int64.self).all()
        guard let stored = try await self.statusIdentity() else { throw StoreError.corruptRow("the Status identity was not stored") }
        return stored
    }

    private func decodeStatusRegistrations(_ rows: PostgresRowSequence) async throws -> [StatusRegistrationRecord] {
        try await rows.decode((ByteBuffer, String, Int64, ByteBuffer?).self).all().map { row in
            guard row.2 >= 0 else { throw StoreError.corruptRow("unreadable Status registration row") }
            return StatusRegistrationRecord(publicKeyHash: Array(buffer: row.0), installationID: row.1, version: UInt64(row.2), registration: row.3.map { Array(buffer: $0) })
        }
    }

    // MARK: Helpers

    private func rows(_ sql: String, _ binds: PostgresBindings) async throws -> PostgresRowSequence {
        do {
            return try await self.client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: self.logger)
        } catch let error as PSQLError {
            throw StoreError.unavailable("PostgreSQL: \(String(reflecting: error))")
        }
    }

    private func scalar(_ sql: String, _ binds: PostgresBindings) async throws -> Int {
        guard let value = try await self.rows(sql, binds).decode(Int.self).all().first else {
            throw StoreError.corruptRow("expected a number from the database")
        }
        return value
    }

    private static func binds(_ values: String...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values { binds.append(value) }
        return binds
    }

    private static func binds(_ device: DeviceRegistration) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 8)
        Self.append(device, to: &binds)
        return binds
    }

    private static func append(_ device: DeviceRegistration, to binds: inout PostgresBindings) {
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
