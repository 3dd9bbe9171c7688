public import CoreMetrics
public import PushgateProviderSupport

/// What an app's APNs connections report, as metrics per app: the connections
/// (``ProviderConnectionEvents``), and `pushgate_apns_pings_sent_total{app}` and
/// `pushgate_apns_pings_missed_total{app}` (PINGs whose ACK never came, each ending a dead connection).
public final class APNsConnectionEvents: Sendable {
    /// Connections opened and closed.
    public let connections: ProviderConnectionEvents
    private let pingsSent: Counter?
    private let pingsMissed: Counter?

    /// Events nobody records (tests, one-shot sends).
    public init() {
        self.connections = ProviderConnectionEvents()
        self.pingsSent = nil
        self.pingsMissed = nil
    }

    /// Events recorded as `appID`'s metrics through `factory`, created at zero.
    public init(appID: String, factory: any MetricsFactory) {
        let dimensions = [("app", appID)]
        self.connections = ProviderConnectionEvents(appID: appID, factory: factory)
        self.pingsSent = Counter(label: "pushgate_apns_pings_sent_total", dimensions: dimensions, factory: factory)
        self.pingsMissed = Counter(label: "pushgate_apns_pings_missed_total", dimensions: dimensions, factory: factory)
        self.pingsSent?.increment(by: 0)
        self.pingsMissed?.increment(by: 0)
    }

    func opened() { self.connections.opened() }

    func closed() { self.connections.closed() }

    func pingSent() { self.pingsSent?.increment() }

    func pingMissed() { self.pingsMissed?.increment() }
}
