public import CoreMetrics
import PushgateCore

/// Delivery counters and timings, per app and outcome:
/// `pushgate_deliveries_total{app,outcome}`, `pushgate_delivery_duration_seconds{app}`,
/// `pushgate_outbox_given_up_total{app}`, `pushgate_inflight_limit_drops_total{app}`.
public struct DeliveryMetrics: Sendable {
    private let factory: any MetricsFactory

    /// Creates metrics recorded through `factory` (the composition root passes the Prometheus one).
    public init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func record(appID: String, outcome: DeliveryOutcome, duration: Duration) {
        Counter(label: "pushgate_deliveries_total", dimensions: [("app", appID), ("outcome", outcome.label)], factory: self.factory)
            .increment()
        Timer(label: "pushgate_delivery_duration_seconds", dimensions: [("app", appID)], factory: self.factory)
            .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    func recordGivenUp(appID: String) {
        Counter(label: "pushgate_outbox_given_up_total", dimensions: [("app", appID)], factory: self.factory).increment()
    }

    func recordInflightDrop(appID: String) {
        Counter(label: "pushgate_inflight_limit_drops_total", dimensions: [("app", appID)], factory: self.factory).increment()
    }
}
