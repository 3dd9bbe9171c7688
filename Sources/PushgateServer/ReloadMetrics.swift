import CoreMetrics
import Foundation

/// The metrics of configuration reloads: `pushgate_config_reloads_total{outcome}` (applied, unchanged,
/// failed), `pushgate_config_generation` (1 at start, one more for each reload that changed something)
/// and `pushgate_config_last_reload_success_timestamp_seconds` (the load at start until the first
/// reload, so an alert on its age has a series from the start).
struct ReloadMetrics: Sendable {
    /// How a reload ended.
    enum Outcome: String, Sendable, CaseIterable {
        /// The file was valid and something changed.
        case applied
        /// The file was valid and nothing that can change live changed.
        case unchanged
        /// The file could not be read or was invalid: nothing changed.
        case failed
    }

    private let factory: any MetricsFactory

    init(factory: any MetricsFactory) {
        self.factory = factory
        for outcome in Outcome.allCases {
            Counter(label: "pushgate_config_reloads_total", dimensions: [("outcome", outcome.rawValue)], factory: factory).increment(by: 0)
        }
        self.recordGeneration(1)
        Gauge(label: "pushgate_config_last_reload_success_timestamp_seconds", factory: factory).record(Date().timeIntervalSince1970)
    }

    func record(_ outcome: Outcome, at time: Date = Date()) {
        Counter(label: "pushgate_config_reloads_total", dimensions: [("outcome", outcome.rawValue)], factory: self.factory).increment()
        if outcome != .failed {
            Gauge(label: "pushgate_config_last_reload_success_timestamp_seconds", factory: self.factory).record(time.timeIntervalSince1970)
        }
    }

    func recordGeneration(_ generation: Int) {
        Gauge(label: "pushgate_config_generation", factory: self.factory).record(generation)
    }
}
