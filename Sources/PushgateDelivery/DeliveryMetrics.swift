public import CoreMetrics
import PushgateCore

/// Delivery counters and timings, per app and outcome:
/// `pushgate_deliveries_total{app,outcome}`, `pushgate_delivery_duration_seconds{app}`,
/// `pushgate_outbox_given_up_total{app}`, `pushgate_outbox_expired_total{app}` (queued notifications whose
/// time to live ran out), `pushgate_inflight_limit_drops_total{app}`, and Sygnal's name for
/// the last, `sygnal_inflight_request_limit_drop_total{pushkin}`, so existing dashboards keep working; the
/// circuit (``AppAdmission``): `pushgate_provider_circuit_open{app}` (1 while open),
/// `pushgate_provider_circuit_opened_total{app}` and `pushgate_provider_circuit_refusals_total{app}`
/// (deliveries failed at once while it was open); `pushgate_provider_credentials_failing{app}` (1 while the
/// provider refuses the app's credentials); the outbox's backlog (``OutboxBacklogSampler``):
/// `pushgate_outbox_depth{app}` (tokens waiting, leased or not) and
/// `pushgate_outbox_oldest_age_seconds{app}` (how long the oldest has waited; 0 when none waits).
///
/// Each metric's handle is made once per app (and outcome) and kept: looking one up in the factory on
/// every delivery costs more than the delivery's own bookkeeping.
public struct DeliveryMetrics: Sendable {
    private let factory: any MetricsFactory
    private let counters = MemoTable<HandleKey, Counter>()
    private let timers = MemoTable<String, Timer>()
    private let gauges = MemoTable<String, Gauge>()
    private let credentialsGauges = MemoTable<String, Gauge>()
    private let backlogGauges = MemoTable<String, BacklogGauges>()

    /// Creates metrics recorded through `factory` (the composition root passes the Prometheus one).
    public init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func record(appID: String, outcome: DeliveryOutcome, duration: Duration) {
        let label = outcome.label
        self.counters.value(for: HandleKey(metric: .deliveries, appID: appID, outcome: label)) {
            Counter(label: "pushgate_deliveries_total", dimensions: [("app", appID), ("outcome", label)], factory: self.factory)
        }.increment()
        self.timers.value(for: appID) {
            Timer(label: "pushgate_delivery_duration_seconds", dimensions: [("app", appID)], factory: self.factory)
        }.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// A delivery refused before it reached the provider (its circuit open, its credentials failing, its
    /// in-flight cap reached): counted with the deliveries' outcomes, with no duration.
    func recordRefused(appID: String, outcome: DeliveryOutcome) {
        let label = outcome.label
        self.counters.value(for: HandleKey(metric: .deliveries, appID: appID, outcome: label)) {
            Counter(label: "pushgate_deliveries_total", dimensions: [("app", appID), ("outcome", label)], factory: self.factory)
        }.increment()
    }

    func recordGivenUp(appID: String) {
        self.counters.value(for: HandleKey(metric: .givenUp, appID: appID, outcome: "")) {
            Counter(label: "pushgate_outbox_given_up_total", dimensions: [("app", appID)], factory: self.factory)
        }.increment()
    }

    /// A queued notification whose time to live ran out before it could be delivered again.
    func recordExpired(appID: String) {
        self.counters.value(for: HandleKey(metric: .expired, appID: appID, outcome: "")) {
            Counter(label: "pushgate_outbox_expired_total", dimensions: [("app", appID)], factory: self.factory)
        }.increment()
    }

    func recordInflightDrop(appID: String) {
        self.inflightDropCounters(appID).forEach { $0.increment() }
    }

    /// Creates each app's in-flight drop counters at zero, as Sygnal does, so they are listed before
    /// the first drop, and its circuit and backlog metrics.
    public func prepare(appIDs: [String]) {
        for appID in appIDs {
            _ = self.inflightDropCounters(appID)
            self.circuitGauge(appID).record(0)
            self.credentialsGauge(appID).record(0)
            self.counter(.circuitOpened, appID, "pushgate_provider_circuit_opened_total").increment(by: 0)
            self.counter(.circuitRefusals, appID, "pushgate_provider_circuit_refusals_total").increment(by: 0)
            self.recordBacklog(appID: appID, tokens: 0, oldestAge: .zero)
        }
    }

    func recordCircuit(appID: String, open: Bool) {
        self.circuitGauge(appID).record(open ? 1 : 0)
        if open { self.counter(.circuitOpened, appID, "pushgate_provider_circuit_opened_total").increment() }
    }

    func recordCredentials(appID: String, failing: Bool) {
        self.credentialsGauge(appID).record(failing ? 1 : 0)
    }

    func recordCircuitRefusal(appID: String) {
        self.counter(.circuitRefusals, appID, "pushgate_provider_circuit_refusals_total").increment()
    }

    func recordBacklog(appID: String, tokens: Int, oldestAge: Duration) {
        let gauges = self.backlogGauges.value(for: appID) {
            BacklogGauges(
                depth: Gauge(label: "pushgate_outbox_depth", dimensions: [("app", appID)], factory: self.factory),
                oldestAge: Gauge(label: "pushgate_outbox_oldest_age_seconds", dimensions: [("app", appID)], factory: self.factory)
            )
        }
        gauges.depth.record(tokens)
        gauges.oldestAge.record(Double(oldestAge.components.seconds) + Double(oldestAge.components.attoseconds) / 1e18)
    }

    private func circuitGauge(_ appID: String) -> Gauge {
        self.gauges.value(for: appID) { Gauge(label: "pushgate_provider_circuit_open", dimensions: [("app", appID)], factory: self.factory) }
    }

    private func credentialsGauge(_ appID: String) -> Gauge {
        self.credentialsGauges.value(for: appID) {
            Gauge(label: "pushgate_provider_credentials_failing", dimensions: [("app", appID)], factory: self.factory)
        }
    }

    private func counter(_ metric: HandleKey.Metric, _ appID: String, _ label: String) -> Counter {
        self.counters.value(for: HandleKey(metric: metric, appID: appID, outcome: "")) {
            Counter(label: label, dimensions: [("app", appID)], factory: self.factory)
        }
    }

    private func inflightDropCounters(_ appID: String) -> [Counter] {
        [
            self.counters.value(for: HandleKey(metric: .inflightDrops, appID: appID, outcome: "")) {
                Counter(label: "pushgate_inflight_limit_drops_total", dimensions: [("app", appID)], factory: self.factory)
            },
            self.counters.value(for: HandleKey(metric: .sygnalInflightDrops, appID: appID, outcome: "")) {
                Counter(label: "sygnal_inflight_request_limit_drop_total", dimensions: [("pushkin", appID)], factory: self.factory)
            },
        ]
    }
}

/// An app's two backlog gauges.
private struct BacklogGauges: Sendable {
    var depth: Gauge
    var oldestAge: Gauge
}

/// Which counter, for which app and outcome.
private struct HandleKey: Hashable, Sendable {
    enum Metric: Hashable, Sendable {
        case deliveries, givenUp, expired, inflightDrops, sygnalInflightDrops, circuitOpened, circuitRefusals
    }

    var metric: Metric
    var appID: String
    var outcome: String
}
