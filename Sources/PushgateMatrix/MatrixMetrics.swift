public import CoreMetrics

/// Sygnal's Prometheus metrics for the notify endpoint, under Sygnal's names, so existing dashboards
/// keep working.
public struct MatrixMetrics: Sendable {
    private let factory: any MetricsFactory

    /// Creates metrics recorded through `factory`.
    public init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func notificationReceived(devices: Int) {
        Counter(label: "sygnal_notifications_received_total", factory: self.factory).increment()
        Counter(label: "sygnal_notifications_devices_received_total", factory: self.factory).increment(by: devices)
    }

    func dispatched(app: String) {
        Counter(label: "sygnal_per_pushkin_type_total", dimensions: [("pushkin", app)], factory: self.factory).increment()
    }

    func answered(code: Int, duration: Duration) {
        Counter(label: "sygnal_pushgateway_status_codes_total", dimensions: [("code", String(code))], factory: self.factory).increment()
        Timer(label: "sygnal_notify_time", dimensions: [("code", String(code))], factory: self.factory)
            .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    func inFlight(_ change: Double) {
        Gauge(label: "sygnal_requests_in_flight", dimensions: [("resource", "V1NotifyHandler")], factory: self.factory).record(change)
    }
}
