public import Foundation
import PushgateCore
import PushgateStore
import SQLiteNIO

// Shared counters in SQLite.
extension SQLiteStore {
    public func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64 {
        let binds: [SQLiteData] = [
            .text(name), .integer(Int(amount)), expiresAt.map { .integer(Int($0.millisecondsSince1970)) } ?? .null,
            .integer(Int(now.millisecondsSince1970)),
        ]
        return Int64(try await self.scalar(on: self.writer, StoreStatements.incrementCounter, binds))
    }

    public func incrementCounters(_ amounts: [String: Int64], expiresAt: Date?, now: Date) async throws {
        guard !amounts.isEmpty else { return }
        // One multi-row upsert per chunk; one chunk needs no transaction.
        let expiry = expiresAt.map { SQLiteData.integer(Int($0.millisecondsSince1970)) } ?? .null
        let increments = StoreStatements.counterIncrements(amounts)
        let statements = increments.chunked(by: StoreStatements.selectDevicesChunkSize).map { chunk -> (String, [SQLiteData]) in
            var binds: [SQLiteData] = []
            for (offset, increment) in chunk.enumerated() {
                binds.append(.text(increment.name))
                binds.append(.integer(Int(increment.amount)))
                if offset == 0 { binds.append(expiry) }
            }
            binds.append(.integer(Int(now.millisecondsSince1970)))
            return (StoreStatements.incrementCounters(count: chunk.count), binds)
        }
        let connection = self.writer
        try await self.writes.run {
            if statements.count == 1 {
                _ = try await Self.query(connection, statements[0].0, statements[0].1)
                return
            }
            try await Self.inTransaction(connection) {
                for (sql, binds) in statements { _ = try await Self.query(connection, sql, binds) }
            }
        }
    }

    public func counterValue(_ name: String, now: Date) async throws -> Int64 {
        let rows = try await self.run(on: self.reader, StoreStatements.selectCounter, [.text(name), .integer(Int(now.millisecondsSince1970))])
        return Int64(rows.first?.first?.integer ?? 0)
    }

    public func counterValues(_ names: [String], now: Date) async throws -> [String: Int64] {
        var values: [String: Int64] = [:]
        for chunk in Array(Set(names)).chunked(by: StoreStatements.selectDevicesChunkSize) {
            let binds = [SQLiteData.integer(Int(now.millisecondsSince1970))] + chunk.map { SQLiteData.text($0) }
            for columns in try await self.run(on: self.reader, StoreStatements.selectCounters(count: chunk.count), binds) {
                if columns.count == 2, let name = columns[0].string, let value = columns[1].integer { values[name] = Int64(value) }
            }
        }
        return values
    }

    public func purgeExpiredCounters(now: Date) async throws -> Int {
        try await self.run(on: self.writer, StoreStatements.purgeCounters, [.integer(Int(now.millisecondsSince1970))]).count
    }
}
