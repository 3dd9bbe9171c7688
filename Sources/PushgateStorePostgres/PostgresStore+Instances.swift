public import Foundation
import PostgresNIO
import PushgateCore
public import PushgateStore

// Instance heartbeats in PostgreSQL: every instance on the database writes its own row.
extension PostgresStore {
    public func recordInstance(_ record: InstanceRecord) async throws {
        var binds = PostgresBindings(capacity: 4)
        binds.append(record.name)
        binds.append(record.lastSeen.millisecondsSince1970)
        binds.append(record.version)
        binds.append(record.started.millisecondsSince1970)
        _ = try await self.rows(InstanceStatements.record, binds)
    }

    public func instances(seenSince since: Date) async throws -> [InstanceRecord] {
        var binds = PostgresBindings()
        binds.append(since.millisecondsSince1970)
        return try await self.rows(InstanceStatements.selectSeenSince, binds).decode((String, Int64, String, Int64).self).all().map {
            InstanceRecord(name: $0.0, lastSeen: Date(millisecondsSince1970: $0.1), version: $0.2, started: Date(millisecondsSince1970: $0.3))
        }
    }

    public func purgeInstances(seenBefore cutoff: Date) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(cutoff.millisecondsSince1970)
        return try await self.rows(InstanceStatements.purge, binds).decode(String.self).all().count
    }
}
