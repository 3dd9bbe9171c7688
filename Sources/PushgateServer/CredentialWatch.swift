public import Foundation
public import Logging
public import PushgateCore
public import Prometheus
public import ServiceLifecycle
import Synchronization

/// Watches the dates of the apps' credentials: publishes each as
/// `pushgate_credential_expiry_timestamp_seconds{app,kind}`, logs every credential's identity at start,
/// and warns in the log when a certificate comes within 30, 7 and 1 days of its end (at start, and at
/// the check once a day that first finds it there), and every day once it has expired.
public final class CredentialWatch: Service, Sendable {
    private let credentials: [ProviderCredential]
    private let interval: Duration
    private let now: @Sendable () -> Date
    private let logger: Logger
    /// The step each dated credential was last reported at, by its index in ``credentials``.
    private let reported: Mutex<[Int: CredentialExpiry]>

    /// - Parameters:
    ///   - credentials: every app's credentials, as read at start.
    ///   - registry: where the expiry gauges go.
    ///   - interval: the time between checks (a day).
    ///   - now: the wall clock (injectable for tests).
    public init(
        credentials: [ProviderCredential], registry: PrometheusCollectorRegistry, interval: Duration = .seconds(86_400),
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger
    ) {
        self.credentials = credentials
        self.interval = interval
        self.now = now
        self.logger = logger
        self.reported = Mutex([:])
        for credential in credentials {
            guard let notAfter = credential.notAfter else { continue }
            registry.makeGauge(
                name: "pushgate_credential_expiry_timestamp_seconds", labels: [("app", credential.appID), ("kind", credential.kind.rawValue)]
            ).set(notAfter.timeIntervalSince1970)
        }
    }

    /// Logs each credential, then checks their dates now and once every interval until graceful shutdown.
    public func run() async throws {
        for credential in self.credentials {
            var metadata: Logger.Metadata = ["app": "\(credential.appID)", "kind": "\(credential.kind.rawValue)", "identity": "\(credential.identity)"]
            if let notAfter = credential.notAfter { metadata["not_after"] = "\(ISO8601DateFormatter().string(from: notAfter))" }
            if let file = credential.file { metadata["file"] = "\(file)" }
            self.logger.info("credential", metadata: metadata)
        }
        guard self.credentials.contains(where: { $0.notAfter != nil }) else {
            // Nothing to check, but a service that returns early ends the whole group: wait for shutdown.
            try? await gracefulShutdown()
            return
        }
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
        for (index, credential) in self.credentials.enumerated() {
            guard let notAfter = credential.notAfter else { continue }
            let step = CredentialExpiry(notAfter: notAfter, now: now)
            let previous = self.reported.withLock { reported in
                defer { reported[index] = step }
                return reported[index]
            }
            var metadata: Logger.Metadata = [
                "app": "\(credential.appID)", "kind": "\(credential.kind.rawValue)", "identity": "\(credential.identity)",
                "not_after": "\(ISO8601DateFormatter().string(from: notAfter))",
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
                metadata["days_left"] = "\(String(format: "%.1f", left))"
                self.logger.warning("credential expires within \(days) \(days == 1 ? "day" : "days"): replace it", metadata: metadata)
            }
        }
    }
}
