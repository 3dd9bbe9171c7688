public import Foundation
import PushgateCore
public import PushgateStore
import SQLiteNIO

// Instance heartbeats in SQLite (one process has the store: the gateway lists itself).
extension SQLiteStore {
    public func recordInstance(_ record: InstanceRecord) async throws {
        let binds: [SQLiteData] = [
            .text(record.name), .integer(Int(record.lastSeen.millisecondsSince1970)), .text(record.version),
            .integer(Int(record.started.millisecondsSince1970)),
        ]
        _ = try await self.run(on: self.writer, InstanceStatements.record, binds)
    }

    public func instances(seenSince since: Date) async throws -> [InstanceRecord] {
        try await self.run(on: self.reader, InstanceStatements.selectSeenSince, [.integer(Int(since.millisecondsSince1970))]).map { columns in
            guard columns.count == 4, let name = columns[0].string, let lastSeen = columns[1].integer, let version = columns[2].string,
                let started = columns[3].integer
            else { throw StoreError.corruptRow("unreadable instance row") }
            return InstanceRecord(
                name: name, lastSeen: Date(millisecondsSince1970: Int64(lastSeen)), version: version,
                started: Date(millisecondsSince1970: Int64(started))
            )
        }
    }

    public func purgeInstances(seenBefore cutoff: Date) async throws -> Int {
        try await self.run(on: self.writer, InstanceStatements.purge, [.integer(Int(cutoff.millisecondsSince1970))]).count
    }
}
