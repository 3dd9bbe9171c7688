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

    public func incrementCounters(_ names: [String], by amount: Int64, expiresAt: Date?, now: Date) async throws {
        guard !names.isEmpty else { return }
        // One multi-row upsert per chunk (a name given twice adds twice); one chunk needs no transaction.
        var totals: [String: Int64] = [:]
        var order: [String] = []
        for name in names {
            if totals[name] == nil { order.append(name) }
            totals[name, default: 0] += amount
        }
        let expiry = expiresAt.map { SQLiteData.integer(Int($0.millisecondsSince1970)) } ?? .null
        let statements = order.chunked(by: StoreStatements.selectDevicesChunkSize).map { chunk -> (String, [SQLiteData]) in
            var binds: [SQLiteData] = []
            for (offset, name) in chunk.enumerated() {
                binds.append(.text(name))
                binds.append(.integer(Int(totals[name] ?? amount)))
                if offset == 0 { binds.append(expiry) }
            }
            binds.append(.integer(Int(now.millisecondsSince1970)))
            return (Self.incrementCountersStatement(count: chunk.count), binds)
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

    /// ``StoreStatements/incrementCounter`` for `count` names in one statement. SQLite numbers `$N`
    /// parameters in order of first appearance, so the binds are: name 1, amount 1, expiry, then name and
    /// amount of each further row, then now (ms).
    static func incrementCountersStatement(count: Int) -> String {
        let rows = (0..<count).map { row in
            row == 0 ? "($1, $2, $3)" : "($\(2 * row + 2), $\(2 * row + 3), $3)"
        }
        let now = "$\(2 * count + 2)"
        return """
            INSERT INTO counters (name, value, expires_at) VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (name) DO UPDATE SET
                value = CASE WHEN counters.expires_at IS NOT NULL AND counters.expires_at <= \(now)
                    THEN excluded.value ELSE counters.value + excluded.value END,
                expires_at = CASE WHEN counters.expires_at IS NOT NULL AND counters.expires_at <= \(now)
                    THEN excluded.expires_at ELSE counters.expires_at END
            """
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
