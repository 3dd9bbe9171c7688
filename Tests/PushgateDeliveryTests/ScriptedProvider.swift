import CoreMetrics
import Foundation
import Logging
import PushgateCore
import Synchronization

/// A stand-in back end for dispatcher and worker tests: it answers each token with a scripted list of
/// outcomes (the last one repeats) and records what it was asked to deliver.
final class ScriptedProvider: PushProvider {
    let appID: String
    let platform = Platform.fcm
    private let script: Mutex<[String: [DeliveryOutcome]]>
    private let calls = Mutex<[String]>([])
    /// Deliveries under way now, and the most seen at once since the last ``resetPeakInFlight()``.
    private let inFlight = Mutex<(now: Int, peak: Int)>((0, 0))
    let delay: Duration

    init(appID: String, script: [String: [DeliveryOutcome]] = [:], delay: Duration = .zero) {
        self.appID = appID
        self.script = Mutex(script)
        self.delay = delay
    }

    func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        self.calls.withLock { $0.append(token) }
        self.inFlight.withLock { count in
            count.now += 1
            count.peak = max(count.peak, count.now)
        }
        defer { self.inFlight.withLock { $0.now -= 1 } }
        if self.delay > .zero { try? await Task.sleep(for: self.delay) }
        return self.script.withLock { script in
            guard var outcomes = script[token], !outcomes.isEmpty else { return .delivered }
            let next = outcomes.removeFirst()
            script[token] = outcomes.isEmpty ? [next] : outcomes
            return next
        }
    }

    var deliveredTokens: [String] { self.calls.withLock { $0 } }

    /// The most deliveries that were under way at once since the last reset.
    var peakInFlight: Int { self.inFlight.withLock { $0.peak } }

    /// Starts counting the peak again from the deliveries under way now.
    func resetPeakInFlight() {
        self.inFlight.withLock { $0.peak = $0.now }
    }
}

/// Metrics that go nowhere.
struct NoMetrics {
    static var factory: any MetricsFactory { NOOPMetricsHandler.instance }
}

enum TestLogging {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.tests")
        logger.logLevel = .critical
        return logger
    }()
}
