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
    /// The time to live of each call's notification, in order.
    private let lifetimes = Mutex<[(token: String, timeToLive: Int?)]>([])
    /// Deliveries under way now, and the most seen at once since the last ``resetPeakInFlight()``.
    private let inFlight = Mutex<(now: Int, peak: Int)>((0, 0))
    let delay: Duration
    /// Whether its failures open the app's circuit (false: a provider posting to many servers).
    let sharesOneCircuit: Bool
    /// The time to live it would send for a notification that states none (a Web Push app's `ttl`).
    let defaultTimeToLive: Int?
    /// While closed, deliveries wait (a provider that accepts and never answers); opening lets them finish.
    let gate = ProviderGate()
    /// When each call came, in order.
    private let callTimes = Mutex<[(token: String, at: ContinuousClock.Instant)]>([])

    init(
        appID: String, script: [String: [DeliveryOutcome]] = [:], delay: Duration = .zero, sharesOneCircuit: Bool = true,
        defaultTimeToLive: Int? = nil
    ) {
        self.appID = appID
        self.sharesOneCircuit = sharesOneCircuit
        self.defaultTimeToLive = defaultTimeToLive
        self.script = Mutex(script)
        self.delay = delay
    }

    func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        self.calls.withLock { $0.append(token) }
        self.lifetimes.withLock { $0.append((token, notification.timeToLive)) }
        self.callTimes.withLock { $0.append((token, ContinuousClock.now)) }
        await self.gate.pass()
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

    /// The time to live each call for `token` was asked to send, in order.
    func timesToLive(of token: String) -> [Int?] {
        self.lifetimes.withLock { $0.filter { $0.token == token }.map(\.timeToLive) }
    }

    /// When the first call for each token came.
    var firstCalls: [String: ContinuousClock.Instant] {
        self.callTimes.withLock { calls in
            var first: [String: ContinuousClock.Instant] = [:]
            for call in calls where first[call.token] == nil { first[call.token] = call.at }
            return first
        }
    }

    /// The most deliveries that were under way at once since the last reset.
    var peakInFlight: Int { self.inFlight.withLock { $0.peak } }

    /// Starts counting the peak again from the deliveries under way now.
    func resetPeakInFlight() {
        self.inFlight.withLock { $0.peak = $0.now }
    }
}

/// Holds callers while closed.
final class ProviderGate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((true, []))

    /// Returns at once while open; otherwise when the gate opens.
    func pass() async {
        await withCheckedContinuation { continuation in
            let now = self.state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func close() { self.state.withLock { $0.open = false } }

    func open() {
        let waiters = self.state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
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
