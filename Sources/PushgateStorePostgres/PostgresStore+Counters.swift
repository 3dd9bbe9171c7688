public import Foundation
import PostgresNIO
import PushgateCore
import PushgateStore

// Shared counters in PostgreSQL.
extension PostgresStore {
    public func incrementCounter(_ name: String, by amount: Int64, expiresAt: Date?, now: Date) async throws -> Int64 {
        var binds = PostgresBindings()
        binds.append(name)
        binds.append(amount)
        binds.append(expiresAt?.millisecondsSince1970)
        binds.append(now.millisecondsSince1970)
        return Int64(try await self.scalar(StoreStatements.incrementCounter, binds))
    }

    public func incrementCounters(_ amounts: [String: Int64], expiresAt: Date?, now: Date) async throws {
        guard !amounts.isEmpty else { return }
        // One multi-row upsert per chunk (one statement a row made a group of thousands take seconds, past
        // the store's deadline); one chunk needs no transaction.
        let statements = StoreStatements.counterIncrements(amounts)
            .chunked(by: StoreStatements.selectDevicesChunkSize).map { chunk -> PostgresQuery in
                var binds = PostgresBindings(capacity: 2 * chunk.count + 2)
                for (offset, increment) in chunk.enumerated() {
                    binds.append(increment.name)
                    binds.append(increment.amount)
                    if offset == 0 { binds.append(expiresAt?.millisecondsSince1970) }
                }
                binds.append(now.millisecondsSince1970)
                return PostgresQuery(unsafeSQL: StoreStatements.incrementCounters(count: chunk.count), binds: binds)
            }
        if statements.count == 1 {
            _ = try await self.client.query(statements[0], logger: self.logger)
            return
        }
        try await self.client.withTransaction(logger: self.logger) { connection in
            for statement in statements { _ = try await connection.query(statement, logger: self.logger) }
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
}
