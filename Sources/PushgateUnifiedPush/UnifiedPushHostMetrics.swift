import CoreMetrics
import Synchronization

/// `pushgate_unifiedpush_deliveries_total{app, host, outcome}`: deliveries by the endpoint's host (never
/// the whole URL: it is a capability) and outcome. The hosts come from pushkeys, which homeservers' users
/// choose, so at most ``hostLimit`` hosts get series of their own; the rest count under `other`.
final class UnifiedPushHostMetrics: Sendable {
    /// The most hosts with series of their own.
    static let hostLimit = 200

    private let appID: String
    private let factory: (any MetricsFactory)?
    private let counters = Mutex<[SeriesKey: Counter]>([:])
    private let hosts = Mutex<Set<String>>([])

    init(appID: String, factory: (any MetricsFactory)?) {
        self.appID = appID
        self.factory = factory
    }

    /// Counts one delivery to `host` (lower-cased `host[:port]`; nil when the pushkey had none).
    func record(host: String?, outcome: String) {
        guard let factory = self.factory else { return }
        let label = self.label(for: host)
        let key = SeriesKey(host: label, outcome: outcome)
        let counter = self.counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(
                label: "pushgate_unifiedpush_deliveries_total", dimensions: [("app", self.appID), ("host", label), ("outcome", outcome)],
                factory: factory
            )
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    /// A series: its host label and outcome.
    private struct SeriesKey: Hashable {
        let host: String
        let outcome: String
    }

    private func label(for host: String?) -> String {
        guard let host else { return "none" }
        return self.hosts.withLock { hosts in
            if hosts.contains(host) { return host }
            guard hosts.count < Self.hostLimit else { return "other" }
            hosts.insert(host)
            return host
        }
    }
}
