public import CoreMetrics

/// What an app's provider connections report, as metrics per app: `pushgate_provider_connections{app}`
/// (open now) and `pushgate_provider_connections_opened_total{app}` (every connect, so reconnects show as
/// its rise). APNs' HTTP/2 connections and the HTTP/1.1 pools of FCM, HMS and Web Push report the same.
///
/// The open count moves up and down (a `Meter`) rather than being set: while a reload drains an app's
/// retired back end, its connections and the new back end's are counted in the one series.
public final class ProviderConnectionEvents: Sendable {
    private let openMeter: Meter?
    private let opens: Counter?

    /// Events nobody records (tests, one-shot sends).
    public init() {
        self.openMeter = nil
        self.opens = nil
    }

    /// Events recorded as `appID`'s metrics through `factory`, created at zero.
    public init(appID: String, factory: any MetricsFactory) {
        let dimensions = [("app", appID)]
        self.openMeter = Meter(label: "pushgate_provider_connections", dimensions: dimensions, factory: factory)
        self.opens = Counter(label: "pushgate_provider_connections_opened_total", dimensions: dimensions, factory: factory)
        self.openMeter?.increment(by: 0)
        self.opens?.increment(by: 0)
    }

    /// Events for `appID` when a factory is given, otherwise unrecorded ones.
    public convenience init(appID: String, factory: (any MetricsFactory)?) {
        if let factory { self.init(appID: appID, factory: factory) } else { self.init() }
    }

    /// A connection was opened.
    public func opened() {
        self.openMeter?.increment()
        self.opens?.increment()
    }

    /// A connection opened earlier was closed.
    public func closed() {
        self.openMeter?.decrement()
    }
}
