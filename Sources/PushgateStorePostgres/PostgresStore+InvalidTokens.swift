public import Foundation
import PostgresNIO
import PushgateCore
public import PushgateStore

// Invalid-token records in PostgreSQL.
extension PostgresStore {
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

    public func purgeInvalidTokens(recordedBefore cutoff: Date) async throws -> Int {
        var binds = PostgresBindings()
        binds.append(cutoff.millisecondsSince1970)
        return try await self.rows(StoreStatements.purgeInvalidTokens, binds).decode(String.self).all().count
    }

    func decodeInvalidTokens(_ rows: PostgresRowSequence) async throws -> [InvalidTokenRecord] {
        try await rows.decode((String, String, String, Int64).self).all().map { row in
            InvalidTokenRecord(appID: row.0, pushToken: row.1, reason: row.2, recordedAt: Date(millisecondsSince1970: row.3))
        }
    }
}
