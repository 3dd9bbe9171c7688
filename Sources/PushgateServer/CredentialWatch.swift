public import Foundation
public import Logging
public import PushgateCore
public import Prometheus
public import ServiceLifecycle
import Synchronization

/// Watches the dates of the apps' credentials: publishes each as
/// `pushgate_credential_expiry_timestamp_seconds{app,kind}`, logs every credential's identity at start,
/// and warns in the log when a certificate comes within 30, 7 and 1 days of its end (at start, after a reload, and at
/// the check once a day that first finds it there), and every day once it has expired.
public final class CredentialWatch: Service, Sendable {
    private struct State {
        var credentials: [ProviderCredential]
        /// The step each dated credential was last reported at, by ``key(_:)``.
        var reported: [String: CredentialExpiry] = [:]
        /// The expiry gauges published, by app and kind: those a reload drops are taken off the registry.
        var gauges: [String: Gauge] = [:]
    }

    private let state: Mutex<State>
    private let registry: PrometheusCollectorRegistry
    private let interval: Duration
    private let now: @Sendable () -> Date
    private let logger: Logger

    /// - Parameters:
    ///   - credentials: every app's credentials, as read at start.
    ///   - registry: where the expiry gauges go.
    ///   - interval: the time between checks (a day).
    ///   - now: the wall clock (injectable for tests).
    public init(
        credentials: [ProviderCredential], registry: PrometheusCollectorRegistry, interval: Duration = .seconds(86_400),
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger
    ) {
        self.state = Mutex(State(credentials: credentials))
        self.registry = registry
        self.interval = interval
        self.now = now
        self.logger = logger
        self.publish(credentials)
    }

    /// The credentials now watched: those read at start, or at the last reload.
    public var credentials: [ProviderCredential] { self.state.withLock { $0.credentials } }

    /// Takes the credentials of a reloaded configuration: logs the ones not seen before, publishes their
    /// dates and checks them at once.
    public func replace(with credentials: [ProviderCredential]) {
        let kept = Set(credentials.map(Self.key))
        let known = self.state.withLock { state in
            defer {
                state.credentials = credentials
                // A credential replaced is forgotten, so one put back later is warned about again.
                state.reported = state.reported.filter { kept.contains($0.key) }
            }
            return Set(state.credentials.map(Self.key))
        }
        self.publish(credentials)
        for credential in credentials where !known.contains(Self.key(credential)) { self.log(credential) }
        self.check()
    }

    /// Logs each credential, then checks their dates now and once every interval until graceful shutdown.
    public func run() async throws {
        for credential in self.state.withLock({ $0.credentials }) { self.log(credential) }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                self.check()
                do {
                    try await Task.sleep(for: self.interval)
                } catch {
                    return
                }
            }
        }
    }

    /// One check: a warning for each dated credential that reached a new step, an error for each expired one.
    func check() {
        let now = self.now()
        for credential in self.state.withLock({ $0.credentials }) {
            guard let notAfter = credential.notAfter else { continue }
            let step = CredentialExpiry(notAfter: notAfter, now: now)
            let previous = self.state.withLock { state in
                defer { state.reported[Self.key(credential)] = step }
                return state.reported[Self.key(credential)]
            }
            var metadata: Logger.Metadata = [
                "app": "\(credential.appID)", "kind": "\(credential.kind.rawValue)", "identity": "\(credential.identity)",
                "not_after": "\(UTCTime.rfc3339(notAfter))",
            ]
            if let file = credential.file { metadata["file"] = "\(file)" }
            switch step {
            case .valid:
                continue
            case .expired:
                self.logger.error("credential expired: the provider refuses it; replace it", metadata: metadata)
            case .within(let days):
                guard step != previous else { continue }
                let left = max(0, notAfter.timeIntervalSince(now) / 86_400)
                metadata["days_left"] = "\((left * 10).rounded(.down) / 10)"
                self.logger.warning("credential expires within \(days) \(days == 1 ? "day" : "days"): replace it", metadata: metadata)
            }
        }
    }

    private func publish(_ credentials: [ProviderCredential]) {
        let name = MetricNameDescriptor(
            namespace: "pushgate", metricName: "credential_expiry_timestamp", unitName: "seconds",
            helpText: "When each dated credential (certificate, CA file) ends, as a Unix time"
        )
        var published: [String: Gauge] = [:]
        for credential in credentials {
            guard let notAfter = credential.notAfter else { continue }
            let gauge = self.registry.makeGauge(descriptor: name, labels: [("app", credential.appID), ("kind", credential.kind.rawValue)])
            gauge.set(notAfter.timeIntervalSince1970)
            published["\(credential.appID)\u{1F}\(credential.kind.rawValue)"] = gauge
        }
        // A credential a reload removed (its app, or a certificate replaced by a key) no longer has a date:
        // its series goes, so an alert on it does not fire for something that is not there.
        let dropped = self.state.withLock { state in
            defer { state.gauges = published }
            return state.gauges.filter { published[$0.key] == nil }.map(\.value)
        }
        for gauge in dropped { self.registry.unregisterGauge(gauge) }
    }

    private func log(_ credential: ProviderCredential) {
        var metadata: Logger.Metadata = ["app": "\(credential.appID)", "kind": "\(credential.kind.rawValue)", "identity": "\(credential.identity)"]
        if let notAfter = credential.notAfter { metadata["not_after"] = "\(UTCTime.rfc3339(notAfter))" }
        if let file = credential.file { metadata["file"] = "\(file)" }
        self.logger.info("credential", metadata: metadata)
    }

    /// A credential's identity across reloads: its app, kind and what it says it is.
    private static func key(_ credential: ProviderCredential) -> String {
        "\(credential.appID)\u{1F}\(credential.kind.rawValue)\u{1F}\(credential.identity)"
    }
}
