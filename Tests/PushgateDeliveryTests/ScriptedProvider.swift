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
    let delay: Duration

    init(appID: String, script: [String: [DeliveryOutcome]] = [:], delay: Duration = .zero) {
        self.appID = appID
        self.script = Mutex(script)
        self.delay = delay
    }

    func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        self.calls.withLock { $0.append(token) }
        if self.delay > .zero { try? await Task.sleep(for: self.delay) }
        return self.script.withLock { script in
            guard var outcomes = script[token], !outcomes.isEmpty else { return .delivered }
            let next = outcomes.removeFirst()
            script[token] = outcomes.isEmpty ? [next] : outcomes
            return next
        }
    }

    var deliveredTokens: [String] { self.calls.withLock { $0 } }
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
