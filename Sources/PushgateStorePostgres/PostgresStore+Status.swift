public import Foundation
import PostgresNIO
import PushgateCore
public import PushgateStore

// The Status push notification server's registrations, seen messages and identity in PostgreSQL.
extension PostgresStore {
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

    func decodeStatusRegistrations(_ rows: PostgresRowSequence) async throws -> [StatusRegistrationRecord] {
        try await rows.decode((ByteBuffer, String, Int64, ByteBuffer?).self).all().map { row in
            guard row.2 >= 0 else { throw StoreError.corruptRow("unreadable Status registration row") }
            return StatusRegistrationRecord(publicKeyHash: Array(buffer: row.0), installationID: row.1, version: UInt64(row.2), registration: row.3.map { Array(buffer: $0) })
        }
    }
}
