public import CoreMetrics
import Synchronization

/// What an app's APNs connections report, as metrics per app: `pushgate_provider_connections{app}` (open
/// now), `pushgate_provider_connections_opened_total{app}` (every connect, so reconnects show as its rise),
/// `pushgate_apns_pings_sent_total{app}` and `pushgate_apns_pings_missed_total{app}` (PINGs whose ACK never
/// came, each ending a dead connection).
public final class APNsConnectionEvents: Sendable {
    private let open = Atomic<Int>(0)
    private let openGauge: Gauge?
    private let opens: Counter?
    private let pingsSent: Counter?
    private let pingsMissed: Counter?

    /// Events nobody records (tests, one-shot sends).
    public init() {
        self.openGauge = nil
        self.opens = nil
        self.pingsSent = nil
        self.pingsMissed = nil
    }

    /// Events recorded as `appID`'s metrics through `factory`, created at zero.
    public init(appID: String, factory: any MetricsFactory) {
        let dimensions = [("app", appID)]
        self.openGauge = Gauge(label: "pushgate_provider_connections", dimensions: dimensions, factory: factory)
        self.opens = Counter(label: "pushgate_provider_connections_opened_total", dimensions: dimensions, factory: factory)
        self.pingsSent = Counter(label: "pushgate_apns_pings_sent_total", dimensions: dimensions, factory: factory)
        self.pingsMissed = Counter(label: "pushgate_apns_pings_missed_total", dimensions: dimensions, factory: factory)
        self.openGauge?.record(0)
        self.opens?.increment(by: 0)
        self.pingsSent?.increment(by: 0)
        self.pingsMissed?.increment(by: 0)
    }

    func opened() {
        let now = self.open.wrappingAdd(1, ordering: .relaxed).newValue
        self.openGauge?.record(now)
        self.opens?.increment()
    }

    func closed() {
        let now = self.open.wrappingSubtract(1, ordering: .relaxed).newValue
        self.openGauge?.record(now)
    }

    func pingSent() { self.pingsSent?.increment() }

    func pingMissed() { self.pingsMissed?.increment() }
}
