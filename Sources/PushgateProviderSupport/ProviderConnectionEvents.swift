public import CoreMetrics
import Synchronization

/// What an app's provider connections report, as metrics per app: `pushgate_provider_connections{app}`
/// (open now) and `pushgate_provider_connections_opened_total{app}` (every connect, so reconnects show as
/// its rise). APNs' HTTP/2 connections and the HTTP/1.1 pools of FCM, HMS and Web Push report the same.
public final class ProviderConnectionEvents: Sendable {
    private let open = Atomic<Int>(0)
    private let openGauge: Gauge?
    private let opens: Counter?

    /// Events nobody records (tests, one-shot sends).
    public init() {
        self.openGauge = nil
        self.opens = nil
    }

    /// Events recorded as `appID`'s metrics through `factory`, created at zero.
    public init(appID: String, factory: any MetricsFactory) {
        let dimensions = [("app", appID)]
        self.openGauge = Gauge(label: "pushgate_provider_connections", dimensions: dimensions, factory: factory)
        self.opens = Counter(label: "pushgate_provider_connections_opened_total", dimensions: dimensions, factory: factory)
        self.openGauge?.record(0)
        self.opens?.increment(by: 0)
    }

    /// Events for `appID` when a factory is given, otherwise unrecorded ones.
    public convenience init(appID: String, factory: (any MetricsFactory)?) {
        if let factory { self.init(appID: appID, factory: factory) } else { self.init() }
    }

    /// A connection was opened.
    public func opened() {
        let now = self.open.wrappingAdd(1, ordering: .relaxed).newValue
        self.openGauge?.record(now)
        self.opens?.increment()
    }

    /// A connection opened earlier was closed.
    public func closed() {
        let now = self.open.wrappingSubtract(1, ordering: .relaxed).newValue
        self.openGauge?.record(now)
    }
}
