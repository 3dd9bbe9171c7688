import Foundation
import Prometheus
import PushgateCore
@testable import PushgateDelivery
import PushgateStore
import PushgateStoreSQLite
import Testing

/// The backlog metrics read from a real outbox: each app's depth in tokens and its oldest entry's age,
/// back to 0 once its entries are gone.
@Suite("Outbox backlog metrics")
struct OutboxBacklogSamplerTests {
    /// The value of the sample of `metric` for `app` in Prometheus' text format.
    static func value(_ registry: PrometheusCollectorRegistry, _ metric: String, app: String) -> Double? {
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        let prefix = "\(metric){app=\"\(app)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }

    @Test func eachAppsDepthAndOldestAgeAreRecordedAndClearedWhenItsEntriesAreGone() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let registry = PrometheusCollectorRegistry()
        let metrics = DeliveryMetrics(factory: PrometheusMetricsFactory(registry: registry))
        metrics.prepare(appIDs: ["a", "b", "idle"])
        #expect(Self.value(registry, "pushgate_outbox_depth", app: "idle") == 0)
        let sampler = OutboxBacklogSampler(store: store, metrics: metrics, logger: TestLogging.quiet)
        try await DispatcherAndOutboxTests.running([store]) { () async throws in
            _ = try await store.enqueue([
                OutboxMessage(appID: "a", pushTokens: ["1", "2"], payload: [1], notBefore: Date()),
                OutboxMessage(appID: "a", pushToken: "3", payload: [2], notBefore: Date().addingTimeInterval(600)),
                OutboxMessage(appID: "b", pushToken: "4", payload: [3], notBefore: Date()),
            ])
            // Read as if 90 s later: the oldest entry has waited that long.
            let seen = await sampler.sample(after: [], now: Date().addingTimeInterval(90))
            #expect(seen == ["a", "b"])
            // The reading is kept for the console too.
            let kept = try #require(sampler.reading.current(maximumAge: .seconds(60)))
            #expect(kept.backlogs.map(\.appID).sorted() == ["a", "b"] && kept.backlogs.map(\.tokens).reduce(0, +) == 4)
            #expect(Self.value(registry, "pushgate_outbox_depth", app: "a") == 3)
            #expect(Self.value(registry, "pushgate_outbox_depth", app: "b") == 1)
            let age = try #require(Self.value(registry, "pushgate_outbox_oldest_age_seconds", app: "a"))
            #expect(age >= 89 && age <= 91)
            #expect(Self.value(registry, "pushgate_outbox_depth", app: "idle") == 0)

            // b's only entry is delivered: its figures go back to 0; a's (one leased, one not due) stay.
            let claimed = try await store.claimDue(now: Date(), limit: 10, leaseFor: .seconds(30), owner: "test")
            let bIDs = claimed.filter { $0.message.appID == "b" }.map(\.id)
            #expect(try await store.complete(ids: bIDs, owner: "test") == 1)
            #expect(await sampler.sample(after: seen) == ["a"])
            #expect(Self.value(registry, "pushgate_outbox_depth", app: "b") == 0)
            #expect(Self.value(registry, "pushgate_outbox_oldest_age_seconds", app: "b") == 0)
            #expect(Self.value(registry, "pushgate_outbox_depth", app: "a") == 3)
        }
    }
}
