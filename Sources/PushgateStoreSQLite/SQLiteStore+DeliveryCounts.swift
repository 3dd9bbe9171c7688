public import PushgateStore
import SQLiteNIO

// Delivery counts in SQLite.
extension SQLiteStore {
    public func addDeliveryCounts(_ counts: [DeliveryCount]) async throws {
        guard !counts.isEmpty else { return }
        let statements = counts.flatMap { count in
            [
                BatchedStatement(
                    sql: DeliveryCountStatements.add,
                    binds: [.integer(Int(count.minute)), .text(count.appID), .text(count.frontEnd), .text(count.outcome), .integer(Int(count.count))]
                ),
                BatchedStatement(
                    sql: DeliveryCountStatements.addHourly,
                    binds: [
                        .integer(Int(DeliveryCountStatements.hour(ofMinute: count.minute))), .text(count.appID), .text(count.frontEnd),
                        .text(count.outcome), .integer(Int(count.count)),
                    ]
                ),
            ]
        }
        _ = try await Self.runTogether(statements, on: self.writer, writes: self.writes)
    }

    public func deliveryCounts(minutes: Range<Int64>) async throws -> [DeliveryCount] {
        let rows = try await self.run(
            on: self.reader, DeliveryCountStatements.select, [.integer(Int(minutes.lowerBound)), .integer(Int(minutes.upperBound))]
        )
        return try rows.map(Self.decodeDeliveryCount)
    }

    public func deliveryTotals(minutes: Range<Int64>) async throws -> [DeliveryCount] {
        let plan = DeliveryCountStatements.plan(minutes: minutes)
        var counts: [DeliveryCount] = []
        if let hours = plan.hours { counts += try await self.sums(DeliveryCountStatements.selectHourlyTotals, hours, minute: minutes.lowerBound) }
        for edge in plan.minutes { counts += try await self.sums(DeliveryCountStatements.selectTotals, edge, minute: minutes.lowerBound) }
        return DeliveryCountStatements.merge(counts, minute: minutes.lowerBound)
    }

    private func sums(_ sql: String, _ range: Range<Int64>, minute: Int64) async throws -> [DeliveryCount] {
        let rows = try await self.run(on: self.reader, sql, [.integer(Int(range.lowerBound)), .integer(Int(range.upperBound))])
        return try rows.map { columns in
            guard columns.count == 4, let app = columns[0].string, let frontEnd = columns[1].string, let outcome = columns[2].string,
                let count = columns[3].integer
            else { throw StoreError.corruptRow("delivery_counts: an unexpected sum") }
            return DeliveryCount(appID: app, frontEnd: frontEnd, outcome: outcome, minute: minute, count: Int64(count))
        }
    }

    public func deliverySumsByApp(minutes: Range<Int64>, currentMinute: Int64) async throws -> [DeliveryAppSum] {
        let plan = DeliverySumPlan(minutes: minutes, currentMinute: currentMinute)
        guard !plan.hours.isEmpty || !plan.added.isEmpty else { return [] }
        let binds = DeliveryCountStatements.sumsByAppBounds(plan).map { SQLiteData.integer(Int($0)) }
        return try await self.run(on: self.reader, DeliveryCountStatements.selectSumsByApp, binds).map { columns in
            guard columns.count == 3, let app = columns[0].string, let outcome = columns[1].string, let count = columns[2].integer else {
                throw StoreError.corruptRow("delivery_counts: an unexpected sum by app")
            }
            return DeliveryAppSum(appID: app, outcome: outcome, count: Int64(count))
        }
    }

    public func deliverySumsByMinute(minutes: Range<Int64>) async throws -> [DeliveryMinuteSum] {
        let binds: [SQLiteData] = [.integer(Int(minutes.lowerBound)), .integer(Int(minutes.upperBound))]
        return try await self.run(on: self.reader, DeliveryCountStatements.selectSumsByMinute, binds).map { columns in
            guard columns.count == 3, let minute = columns[0].integer, let outcome = columns[1].string, let count = columns[2].integer else {
                throw StoreError.corruptRow("delivery_counts: an unexpected sum by minute")
            }
            return DeliveryMinuteSum(minute: Int64(minute), outcome: outcome, count: Int64(count))
        }
    }

    public func purgeDeliveryCounts(before minute: Int64) async throws -> Int {
        _ = try await self.run(on: self.writer, DeliveryCountStatements.purgeHourly, [.integer(Int(DeliveryCountStatements.hour(ofMinute: minute)))])
        return try await self.run(on: self.writer, DeliveryCountStatements.purge, [.integer(Int(minute))]).count
    }

    static func decodeDeliveryCount(_ columns: [SQLiteData]) throws -> DeliveryCount {
        guard columns.count == 5, let app = columns[0].string, let frontEnd = columns[1].string, let outcome = columns[2].string,
            let minute = columns[3].integer, let count = columns[4].integer
        else { throw StoreError.corruptRow("delivery_counts: an unexpected row") }
        return DeliveryCount(appID: app, frontEnd: frontEnd, outcome: outcome, minute: Int64(minute), count: Int64(count))
    }
}
