import Foundation
import Logging
import PushgateDelivery
import PushgateStore
import Testing

@Suite("DeliveryCountStore conformance")
struct DeliveryCountStoreConformanceTests {
    static let minute: Int64 = 29_000_000

    static func count(_ app: String, _ frontEnd: String, _ outcome: String, _ minute: Int64, _ count: Int64) -> DeliveryCount {
        DeliveryCount(appID: app, frontEnd: frontEnd, outcome: outcome, minute: minute, count: count)
    }

    static func sorted(_ counts: [DeliveryCount]) -> [DeliveryCount] {
        counts.sorted { ($0.minute, $0.appID, $0.frontEnd, $0.outcome) < ($1.minute, $1.appID, $1.frontEnd, $1.outcome) }
    }

    @Test(arguments: StoreKind.allCases)
    func countsAddUpPerRowAndRangesReadOnlyTheirMinutes(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let m = Self.minute
            try await store.addDeliveryCounts([
                Self.count("a", "matrix", "delivered", m, 3), Self.count("a", "matrix", "invalid_token", m, 1),
                Self.count("a", "gorush", "delivered", m - 1, 2), Self.count("b", "gorush", "rejected", m - 100, 5),
            ])
            // The same row again adds, in another call or twice in one.
            try await store.addDeliveryCounts([Self.count("a", "matrix", "delivered", m, 1), Self.count("a", "matrix", "delivered", m, 3)])
            try await store.addDeliveryCounts([])
            let lastHour = Self.sorted(try await store.deliveryCounts(minutes: (m - 59)..<(m + 1)))
            #expect(lastHour == [Self.count("a", "gorush", "delivered", m - 1, 2), Self.count("a", "matrix", "delivered", m, 7), Self.count("a", "matrix", "invalid_token", m, 1)])
            #expect(try await store.deliveryCounts(minutes: (m + 1)..<(m + 60)).isEmpty)

            try await store.addDeliveryCounts([Self.count("a", "matrix", "delivered", m - 30, 10)])
            let totals = Self.sorted(try await store.deliveryTotals(minutes: (m - 1439)..<(m + 1)))
            #expect(totals == [
                Self.count("a", "gorush", "delivered", m - 1439, 2), Self.count("a", "matrix", "delivered", m - 1439, 17),
                Self.count("a", "matrix", "invalid_token", m - 1439, 1), Self.count("b", "gorush", "rejected", m - 1439, 5),
            ])
        }
    }

    /// Totals over any range, read from hourly sums and edge minutes, equal the sum of the minutes.
    @Test(arguments: StoreKind.allCases)
    func totalsFromHoursAndEdgeMinutesEqualTheMinutesSum(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let start: Int64 = 29_000_040
            let counts = stride(from: start, to: start + 200, by: 7).map { Self.count("a", "matrix", "delivered", $0, $0 % 5 + 1) }
            try await store.addDeliveryCounts(counts)
            for range in [start..<(start + 200), (start + 13)..<(start + 190), (start + 20)..<(start + 80), (start + 60)..<(start + 120), (start + 5)..<(start + 6)] {
                let expected = counts.filter { range.contains($0.minute) }.reduce(Int64(0)) { $0 + $1.count }
                let totals = try await store.deliveryTotals(minutes: range)
                #expect(totals.reduce(Int64(0)) { $0 + $1.count } == expected, "\(range)")
                #expect(totals.allSatisfy { $0.minute == range.lowerBound })
            }
        }
    }

    @Test func aRangeIsReadAsWholeHoursAndEdgeMinutes() {
        #expect(DeliveryCountStatements.plan(minutes: 59..<181).hours == 1..<3)
        #expect(DeliveryCountStatements.plan(minutes: 59..<181).minutes == [59..<60, 180..<181])
        #expect(DeliveryCountStatements.plan(minutes: 60..<120).hours == 1..<2)
        #expect(DeliveryCountStatements.plan(minutes: 60..<120).minutes == [])
        #expect(DeliveryCountStatements.plan(minutes: 61..<119).hours == nil)
        #expect(DeliveryCountStatements.plan(minutes: 61..<119).minutes == [61..<119])
    }

    /// Sums by app and outcome over any range, whatever the plan (hours plus or minus edge minutes) and
    /// wherever "now" is, equal the sums of the minutes; apps and outcomes without deliveries are left out.
    @Test(arguments: StoreKind.allCases)
    func sumsByAppEqualTheMinutesSums(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let start: Int64 = 29_000_040
            var counts = stride(from: start, to: start + 300, by: 7).map { Self.count("a", "matrix", "delivered", $0, $0 % 5 + 1) }
            counts += stride(from: start + 3, to: start + 300, by: 11).map { Self.count("a", "gorush", "delivered", $0, 2) }
            counts += stride(from: start + 1, to: start + 300, by: 13).map { Self.count("b", "gorush", "rejected", $0, 3) }
            // Only in the first minutes: outside most ranges, while its hour is inside some plans.
            counts.append(Self.count("c", "status", "retry_later", start, 4))
            try await store.addDeliveryCounts(counts)
            let ranges = [
                start..<(start + 300), (start + 13)..<(start + 190), (start + 20)..<(start + 80), (start + 60)..<(start + 120),
                (start + 5)..<(start + 6), (start + 2)..<(start + 58), (start + 61)..<(start + 121), (start + 250)..<(start + 300),
            ]
            for range in ranges {
                var expected: [String: Int64] = [:]
                for count in counts where range.contains(count.minute) { expected["\(count.appID) \(count.outcome)", default: 0] += count.count }
                for current in [range.upperBound - 1, range.lowerBound, range.upperBound + 100] {
                    let sums = try await store.deliverySumsByApp(minutes: range, currentMinute: current)
                    let found = Dictionary(sums.map { ("\($0.appID) \($0.outcome)", $0.count) }, uniquingKeysWith: +)
                    #expect(found == expected, "\(range), current minute \(current)")
                    #expect(sums.count == found.count)
                }
            }
            #expect(try await store.deliverySumsByApp(minutes: (start + 400)..<(start + 460), currentMinute: start + 459).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func sumsByMinuteAddUpAppsAndFrontEnds(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let m = Self.minute
            try await store.addDeliveryCounts([
                Self.count("a", "matrix", "delivered", m, 3), Self.count("b", "gorush", "delivered", m, 4),
                Self.count("a", "matrix", "rejected", m, 1), Self.count("a", "matrix", "delivered", m - 1, 2),
                Self.count("a", "matrix", "delivered", m - 60, 9),
            ])
            let sums = try await store.deliverySumsByMinute(minutes: (m - 59)..<(m + 1))
                .sorted { ($0.minute, $0.outcome) < ($1.minute, $1.outcome) }
            #expect(sums == [
                DeliveryMinuteSum(minute: m - 1, outcome: "delivered", count: 2), DeliveryMinuteSum(minute: m, outcome: "delivered", count: 7),
                DeliveryMinuteSum(minute: m, outcome: "rejected", count: 1),
            ])
        }
    }

    @Test func sumPlansReadTheFewestMinutes() {
        // The last hour ending at minute 142 (of hour 2): hours 1 and 2, minus hour 1's minutes before 83
        // (23 of them) and the minutes after now (none in practice).
        #expect(DeliverySumPlan(minutes: 83..<143, currentMinute: 142) == DeliverySumPlan(hours: 1..<3, added: [], subtracted: [60..<83, 143..<180]))
        // Ending at minute 169: hour 1's minutes from 110 (10 of them) added; hour 2 less the future.
        #expect(DeliverySumPlan(minutes: 110..<170, currentMinute: 169) == DeliverySumPlan(hours: 2..<3, added: [110..<120], subtracted: [170..<180]))
        // In the past, the trailing partial hour is read as its minutes when they are fewer.
        #expect(DeliverySumPlan(minutes: 110..<170, currentMinute: 10_000) == DeliverySumPlan(hours: 2..<3, added: [110..<120], subtracted: [170..<180]))
        #expect(DeliverySumPlan(minutes: 110..<130, currentMinute: 10_000) == DeliverySumPlan(hours: 0..<0, added: [110..<120, 120..<130], subtracted: []))
        // Whole hours only.
        #expect(DeliverySumPlan(minutes: 60..<180, currentMinute: 500) == DeliverySumPlan(hours: 1..<3, added: [], subtracted: []))
        // Within one hour.
        #expect(DeliverySumPlan(minutes: 61..<65, currentMinute: 500) == DeliverySumPlan(hours: 0..<0, added: [61..<65], subtracted: []))
        #expect(DeliverySumPlan(minutes: 61..<120, currentMinute: 500) == DeliverySumPlan(hours: 1..<2, added: [], subtracted: [60..<61]))
        #expect(DeliverySumPlan(minutes: 60..<100, currentMinute: 99) == DeliverySumPlan(hours: 1..<2, added: [], subtracted: [100..<120]))
        #expect(DeliverySumPlan(minutes: 5..<5, currentMinute: 500) == DeliverySumPlan(hours: 0..<0, added: [], subtracted: []))
    }

    @Test(arguments: StoreKind.allCases)
    func oldMinutesArePurged(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let m = Self.minute
            try await store.addDeliveryCounts([Self.count("a", "matrix", "delivered", m - 10_081, 1), Self.count("a", "matrix", "delivered", m, 1)])
            #expect(try await store.purgeDeliveryCounts(before: m - 10_080) == 1)
            #expect(try await store.purgeDeliveryCounts(before: m - 10_080) == 0)
            #expect(try await store.deliveryCounts(minutes: 0..<(m + 1)) == [Self.count("a", "matrix", "delivered", m, 1)])
        }
    }

    /// Two instances on one database add to the same rows: their figures are the deployment's.
    @Test(arguments: StoreKind.allCases)
    func instancesOnOneDatabaseAddUp(kind: StoreKind) async throws {
        try await withStores(kind, count: 2) { stores async throws in
            let m = Self.minute
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores {
                    group.addTask {
                        for _ in 0..<10 { try await store.addDeliveryCounts([Self.count("a", "matrix", "delivered", m, 1), Self.count("a", "gorush", "retry_later", m, 2)]) }
                    }
                }
                try await group.waitForAll()
            }
            let totals = Self.sorted(try await stores[1].deliveryTotals(minutes: m..<(m + 1)))
            #expect(totals == [Self.count("a", "gorush", "retry_later", m, 40), Self.count("a", "matrix", "delivered", m, 20)])
        }
    }

    /// The flusher writes what the tally counted in one go, and keeps it when the store fails.
    @Test(arguments: StoreKind.allCases)
    func theFlusherStoresTheTallyAndKeepsItWhenTheStoreFails(kind: StoreKind) async throws {
        try await withStore(kind) { store async throws in
            let tally = DeliveryTally()
            let now = Date(timeIntervalSince1970: Double(Self.minute) * 60 + 5)
            for _ in 0..<3 { tally.record(appID: "a", frontEnd: "matrix", outcome: "delivered", at: now) }
            tally.record(appID: "a", frontEnd: "matrix", outcome: "rejected", at: now)
            let failing = FailingDeliveryCountStore()
            await DeliveryCountFlusher(tally: tally, store: failing, logger: Logger(label: "test")).flush()
            #expect(tally.pendingTotal == 4)
            await DeliveryCountFlusher(tally: tally, store: store, logger: Logger(label: "test")).flush()
            #expect(tally.pendingTotal == 0)
            let stored = Self.sorted(try await store.deliveryCounts(minutes: Self.minute..<(Self.minute + 1)))
            #expect(stored == [Self.count("a", "matrix", "delivered", Self.minute, 3), Self.count("a", "matrix", "rejected", Self.minute, 1)])
        }
    }
}

/// A store that fails every call.
struct FailingDeliveryCountStore: DeliveryCountStore {
    struct Down: Error {}
    func addDeliveryCounts(_ counts: [DeliveryCount]) async throws { throw Down() }
    func deliveryCounts(minutes: Range<Int64>) async throws -> [DeliveryCount] { throw Down() }
    func deliveryTotals(minutes: Range<Int64>) async throws -> [DeliveryCount] { throw Down() }
    func deliverySumsByApp(minutes: Range<Int64>, currentMinute: Int64) async throws -> [DeliveryAppSum] { throw Down() }
    func deliverySumsByMinute(minutes: Range<Int64>) async throws -> [DeliveryMinuteSum] { throw Down() }
    func purgeDeliveryCounts(before minute: Int64) async throws -> Int { throw Down() }
}
