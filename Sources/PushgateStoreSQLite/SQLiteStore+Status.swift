public import Foundation
import PushgateCore
public import PushgateStore
import SQLiteNIO

// The Status push notification server's registrations, seen messages and identity in SQLite.
extension SQLiteStore {
    public func statusRegistration(publicKeyHash: [UInt8], installationID: String) async throws -> StatusRegistrationRecord? {
        try await self.run(on: self.reader, StatusStoreStatements.selectRegistration, [.blob(ByteBuffer(bytes: publicKeyHash)), .text(installationID)])
            .first.map(Self.decodeStatusRegistration)
    }

    public func statusRegistrations(publicKeyHashes: [[UInt8]]) async throws -> [StatusRegistrationRecord] {
        var found: [StatusRegistrationRecord] = []
        for chunk in Array(Set(publicKeyHashes)).chunked(by: StatusStoreStatements.selectRegistrationsChunkSize) {
            let binds = chunk.map { SQLiteData.blob(ByteBuffer(bytes: $0)) }
            found += try await self.run(on: self.reader, StatusStoreStatements.selectRegistrations(count: chunk.count), binds).map(Self.decodeStatusRegistration)
        }
        return found
    }

    public func saveStatusRegistration(_ record: StatusRegistrationRecord) async throws -> Bool {
        let binds: [SQLiteData] = [
            .blob(ByteBuffer(bytes: record.publicKeyHash)), .text(record.installationID),
            .integer(Int(try StatusStoreStatements.storedVersion(record.version))), record.registration.map { .blob(ByteBuffer(bytes: $0)) } ?? .null,
        ]
        return try await !self.run(on: self.writer, StatusStoreStatements.upsertRegistration, binds).isEmpty
    }

    public func dropStatusRegistration(publicKeyHash: [UInt8], installationID: String, version: UInt64) async throws -> Bool {
        let binds: [SQLiteData] = [
            .blob(ByteBuffer(bytes: publicKeyHash)), .text(installationID), .integer(Int(try StatusStoreStatements.storedVersion(version))),
        ]
        return try await !self.run(on: self.writer, StatusStoreStatements.dropRegistration, binds).isEmpty
    }

    public func statusRegisteredKeyHashes() async throws -> [[UInt8]] {
        try await self.run(on: self.reader, StatusStoreStatements.selectRegisteredKeyHashes, []).map { row in
            guard let hash = row.first?.blob else { throw StoreError.corruptRow("unreadable Status key hash") }
            return Array(buffer: hash)
        }
    }

    public func markStatusMessageSeen(_ id: [UInt8], claim: [UInt8], seenAt: Date) async throws -> Bool {
        try await self.seenMarks.submit(SeenMark(id: id, claim: claim, seenAt: Int(seenAt.millisecondsSince1970)))
    }

    /// One id to record as seen, with the claim of the attempt recording it and its time in milliseconds.
    struct SeenMark: Sendable {
        let id: [UInt8]
        let claim: [UInt8]
        let seenAt: Int
    }

    /// Writes a batch of seen marks in one statement; answers for each whether it takes its id (the id was
    /// new, or is recorded with the mark's claim). Of two marks with one id and different claims the first
    /// takes it, as if written one after the other.
    static func insertSeen(_ marks: [SeenMark], on connection: SQLiteStatementConnection, writes: WriteSerializer) async throws -> [Bool] {
        var firsts = Set<[UInt8]>()
        let distinct = marks.filter { firsts.insert($0.id).inserted }
        var sql = "INSERT INTO status_seen (id, seen_at, claim) VALUES "
        var binds: [SQLiteData] = []
        binds.reserveCapacity(distinct.count * 3)
        for (index, mark) in distinct.enumerated() {
            sql += index == 0 ? "(?1, ?2, ?3)" : ", (?\(index * 3 + 1), ?\(index * 3 + 2), ?\(index * 3 + 3))"
            binds += [.blob(ByteBuffer(bytes: mark.id)), .integer(mark.seenAt), .blob(ByteBuffer(bytes: mark.claim))]
        }
        sql += " ON CONFLICT (id) DO UPDATE SET claim = status_seen.claim RETURNING id, claim"
        // A mark lost to a power cut lets a message be handled again: a second notification, never a lost one.
        let rows = try await writes.run { try await Self.queryDeferringSync(connection, sql, binds).rows }
        var stored: [[UInt8]: [UInt8]] = [:]
        for row in rows {
            guard row.count == 2, let id = row[0].blob else { throw StoreError.corruptRow("unreadable Status seen id") }
            if let claim = row[1].blob { stored[Array(buffer: id)] = Array(buffer: claim) }
        }
        return marks.map { stored[$0.id] == $0.claim }
    }

    public func pruneStatusMessagesSeen(before cutoff: Date) async throws -> Int {
        try await self.run(on: self.writer, StatusStoreStatements.pruneSeen, [.integer(Int(cutoff.millisecondsSince1970))]).count
    }

    public func statusIdentity() async throws -> [UInt8]? {
        try await self.run(on: self.reader, StatusStoreStatements.selectIdentity, []).first.map { row in
            guard let secret = row.first?.blob else { throw StoreError.corruptRow("unreadable Status identity") }
            return Array(buffer: secret)
        }
    }

    public func saveStatusIdentityIfAbsent(_ secret: [UInt8]) async throws -> [UInt8] {
        _ = try await self.run(on: self.writer, StatusStoreStatements.insertIdentity, [.blob(ByteBuffer(bytes: secret))])
        guard let stored = try await self.run(on: self.writer, StatusStoreStatements.selectIdentity, []).first?.first?.blob else {
            throw StoreError.corruptRow("the Status identity was not stored")
        }
        return Array(buffer: stored)
    }

    static func decodeStatusRegistration(_ columns: [SQLiteData]) throws -> StatusRegistrationRecord {
        guard columns.count == 4, let hash = columns[0].blob, let installation = columns[1].string, let version = columns[2].integer, version >= 0
        else { throw StoreError.corruptRow("unreadable Status registration row") }
        return StatusRegistrationRecord(
            publicKeyHash: Array(buffer: hash), installationID: installation, version: UInt64(version), registration: columns[3].blob.map { Array(buffer: $0) }
        )
    }
}
