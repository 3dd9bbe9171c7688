public import CoreMetrics
public import Logging
import PushgateCore
public import PushgateHTTP
public import PushgateStore
import Synchronization

/// Sygnal's Prometheus metrics for the notify endpoint, under Sygnal's names, so existing dashboards
/// keep working.
///
/// Handles are made once (per app and per status code for the labelled ones), not looked up in the
/// registry on every request.
public final class MatrixMetrics: Sendable {
    private let factory: any MetricsFactory
    private let received: Counter
    private let devicesReceived: Counter
    private let requestsInFlight: Gauge
    /// Requests being handled now; the gauge shows it (Sygnal's gauge goes up and down with them).
    private let inFlightCount = Mutex(0)
    private let perApp = MemoTable<String, Counter>()
    private let perCode = MemoTable<Int, CodeHandles>()
    /// Notify requests answered and pushkeys answered as rejected, for the operator console (every
    /// instance's on the store).
    public let consoleCounts: ConsoleCounts
    /// The console counts' indices.
    private enum Count: Int { case notifies, rejectedPushkeys }

    /// The handles labelled with one status code.
    private struct CodeHandles: Sendable {
        let codes: Counter
        let time: Timer
    }

    /// Creates metrics recorded through `factory`, the console's counts kept in `store` (in memory only
    /// when nil).
    public init(factory: any MetricsFactory, store: (any CounterStore)? = nil, logger: Logger = Logger(label: "pushgate.matrix")) {
        self.factory = factory
        self.consoleCounts = ConsoleCounts(frontEnd: "matrix", keys: ["notifies", "rejected_pushkeys"], store: store, logger: logger)
        self.received = Counter(label: "sygnal_notifications_received_total", factory: factory)
        self.devicesReceived = Counter(label: "sygnal_notifications_devices_received_total", factory: factory)
        self.requestsInFlight = Gauge(label: "sygnal_requests_in_flight", dimensions: [("resource", "V1NotifyHandler")], factory: factory)
    }

    func notificationReceived(devices: Int) {
        self.received.increment()
        self.devicesReceived.increment(by: devices)
    }

    func dispatched(app: String) {
        self.perApp.value(for: app) {
            Counter(label: "sygnal_per_pushkin_type_total", dimensions: [("pushkin", app)], factory: self.factory)
        }.increment()
    }

    /// Pushkeys a notify request's answer rejected.
    func rejected(_ count: Int) {
        if count > 0 { self.consoleCounts.add(count, at: Count.rejectedPushkeys.rawValue) }
    }

    /// What the operator console shows: notify requests and rejected pushkeys.
    public func figures() async -> [FrontEndFigure] {
        let values = await self.consoleCounts.values()
        return [
            FrontEndFigure(key: "notifies", label: "Notify requests", value: values[Count.notifies.rawValue]),
            FrontEndFigure(key: "rejected_pushkeys", label: "Rejected pushkeys", value: values[Count.rejectedPushkeys.rawValue]),
        ]
    }

    func answered(code: Int, duration: Duration) {
        self.consoleCounts.add(at: Count.notifies.rawValue)
        let handles = self.perCode.value(for: code) {
            CodeHandles(
                codes: Counter(label: "sygnal_pushgateway_status_codes_total", dimensions: [("code", String(code))], factory: self.factory),
                time: Timer(label: "sygnal_notify_time", dimensions: [("code", String(code))], factory: self.factory)
            )
        }
        handles.codes.increment()
        handles.time.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// Adds `change` (1 or -1) to the requests in flight and shows the new count.
    func inFlight(_ change: Int) {
        self.inFlightCount.withLock { count in
            count += change
            self.requestsInFlight.record(count)
        }
    }
}
