public import Foundation
import PushgateCore
public import PushgateStore
import SQLiteNIO

// Invalid-token records in SQLite.
extension SQLiteStore {
    public func recordInvalidToken(_ record: InvalidTokenRecord) async throws {
        let binds: [SQLiteData] = [
            .text(record.appID), .text(record.pushToken), .text(record.reason), .integer(Int(record.recordedAt.millisecondsSince1970)),
        ]
        _ = try await self.batchedStatements.submit(BatchedStatement(sql: StoreStatements.upsertInvalidToken, binds: binds))
    }

    public func invalidToken(appID: String, pushToken: String) async throws -> InvalidTokenRecord? {
        try await self.run(on: self.reader, StoreStatements.selectInvalidToken, [.text(appID), .text(pushToken)])
            .first.map(Self.decodeInvalidToken)
    }

    public func clearInvalidToken(appID: String, pushToken: String) async throws -> Bool {
        try await !self.run(on: self.writer, StoreStatements.deleteInvalidToken, [.text(appID), .text(pushToken)]).isEmpty
    }

    public func invalidTokens(since: Date, limit: Int) async throws -> [InvalidTokenRecord] {
        try await self.run(on: self.reader, StoreStatements.selectInvalidTokensSince, [.integer(Int(since.millisecondsSince1970)), .integer(limit)])
            .map(Self.decodeInvalidToken)
    }

    public func purgeInvalidTokens(recordedBefore cutoff: Date) async throws -> Int {
        try await self.run(on: self.writer, StoreStatements.purgeInvalidTokens, [.integer(Int(cutoff.millisecondsSince1970))]).count
    }

    static func decodeInvalidToken(_ columns: [SQLiteData]) throws -> InvalidTokenRecord {
        guard columns.count == 4, let appID = columns[0].string, let token = columns[1].string, let reason = columns[2].string,
            let recorded = columns[3].integer
        else { throw StoreError.corruptRow("unreadable invalid-token row") }
        return InvalidTokenRecord(appID: appID, pushToken: token, reason: reason, recordedAt: Date(millisecondsSince1970: Int64(recorded)))
    }
}
