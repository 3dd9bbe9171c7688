import PostgresNIO
public import PushgateStore

// Delivery counts in PostgreSQL.
extension PostgresStore {
    public func addDeliveryCounts(_ counts: [DeliveryCount]) async throws {
        guard !counts.isEmpty else { return }
        // Each key once (one statement may not update a row twice), every row in one global order (the
        // minutes, then the hours, each sorted), so that two instances' flushes never wait on each other's
        // row locks in a cycle; one statement for the minutes and one for the hours.
        let order: (DeliveryCount, DeliveryCount) -> Bool = {
            ($0.minute, $0.appID, $0.frontEnd, $0.outcome) < ($1.minute, $1.appID, $1.frontEnd, $1.outcome)
        }
        let minutes = DeliveryCountStatements.summedByMinute(counts).sorted(by: order)
        let hours = DeliveryCountStatements.summedByMinute(minutes.map { count in
            var hour = count
            hour.minute = DeliveryCountStatements.hour(ofMinute: count.minute)
            return hour
        }).sorted(by: order)
        try await self.client.withTransaction(logger: self.logger) { connection in
            for (sql, rows) in [(DeliveryCountStatements.addRows, minutes), (DeliveryCountStatements.addHourlyRows, hours)] {
                var binds = PostgresBindings(capacity: 5)
                binds.append(rows.map(\.minute))
                binds.append(rows.map(\.appID))
                binds.append(rows.map(\.frontEnd))
                binds.append(rows.map(\.outcome))
                binds.append(rows.map(\.count))
                _ = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: self.logger)
            }
        }
    }

    public func deliveryCounts(minutes: Range<Int64>) async throws -> [DeliveryCount] {
        try await self.rows(DeliveryCountStatements.select, Self.binds(minutes)).decode((String, String, String, Int64, Int64).self).all().map {
            DeliveryCount(appID: $0.0, frontEnd: $0.1, outcome: $0.2, minute: $0.3, count: $0.4)
        }
    }

    public func deliveryTotals(minutes: Range<Int64>) async throws -> [DeliveryCount] {
        let plan = DeliveryCountStatements.plan(minutes: minutes)
        var counts: [DeliveryCount] = []
        if let hours = plan.hours { counts += try await self.sums(DeliveryCountStatements.selectHourlyTotals, hours) }
        for edge in plan.minutes { counts += try await self.sums(DeliveryCountStatements.selectTotals, edge) }
        return DeliveryCountStatements.merge(counts, minute: minutes.lowerBound)
    }

    private func sums(_ sql: String, _ range: Range<Int64>) async throws -> [DeliveryCount] {
        try await self.rows(sql, Self.binds(range)).decode((String, String, String, Int64).self).all().map {
            DeliveryCount(appID: $0.0, frontEnd: $0.1, outcome: $0.2, minute: range.lowerBound, count: $0.3)
        }
    }

    public func deliverySumsByApp(minutes: Range<Int64>, currentMinute: Int64) async throws -> [DeliveryAppSum] {
        let plan = DeliverySumPlan(minutes: minutes, currentMinute: currentMinute)
        guard !plan.hours.isEmpty || !plan.added.isEmpty else { return [] }
        var binds = PostgresBindings(capacity: 10)
        for bound in DeliveryCountStatements.sumsByAppBounds(plan) { binds.append(bound) }
        return try await self.rows(DeliveryCountStatements.selectSumsByApp, binds).decode((String, String, Int64).self).all().map {
            DeliveryAppSum(appID: $0.0, outcome: $0.1, count: $0.2)
        }
    }

    public func deliverySumsByMinute(minutes: Range<Int64>) async throws -> [DeliveryMinuteSum] {
        try await self.rows(DeliveryCountStatements.selectSumsByMinute, Self.binds(minutes)).decode((Int64, String, Int64).self).all().map {
            DeliveryMinuteSum(minute: $0.0, outcome: $0.1, count: $0.2)
        }
    }

    public func purgeDeliveryCounts(before minute: Int64) async throws -> Int {
        var hourly = PostgresBindings()
        hourly.append(DeliveryCountStatements.hour(ofMinute: minute))
        _ = try await self.rows(DeliveryCountStatements.purgeHourly, hourly)
        var binds = PostgresBindings()
        binds.append(minute)
        return try await self.rows(DeliveryCountStatements.purge, binds).decode(Int64.self).all().count
    }

    private static func binds(_ minutes: Range<Int64>) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 2)
        binds.append(minutes.lowerBound)
        binds.append(minutes.upperBound)
        return binds
    }
}
