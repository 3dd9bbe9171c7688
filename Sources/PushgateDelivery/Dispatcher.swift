public import Foundation
public import Logging
public import PushgateCore
public import PushgateStore

/// What front ends call to deliver: now (waiting for the outcome, for the synchronous protocols) or later
/// (durably queued in the outbox, for protocols that must answer before delivery ends).
///
/// Every invalid-token verdict is recorded here, once, so each front end can report it its own way: the
/// token's registrations are removed and an ``InvalidTokenRecord`` is kept.
public struct Dispatcher: Sendable {
    /// The back ends by app id, as configured now (a reload replaces them; see ``reconfigure(_:inflightLimits:resetting:)``).
    public var directory: ProviderDirectory { self.liveDirectory.current }
    private let liveDirectory: LiveValue<ProviderDirectory>
    private let reconfigured = LiveValue(0)
    /// How many times ``reconfigure(_:inflightLimits:resetting:)`` ran (0 at start).
    public var reconfigurations: Int { self.reconfigured.current }
    private let store: any PushStore
    private let admission: AppAdmission
    private let metrics: DeliveryMetrics
    private let wakeUp: OutboxWakeUp
    private let groupCommit: OutboxGroupCommit
    private let logger: Logger
    /// Deliveries counted per app, front end, outcome and minute, until ``DeliveryCountFlusher`` stores them.
    public let tally: DeliveryTally
    /// This instance's last failed deliveries.
    public let recentFailures: RecentFailures
    private let latencies = DeliveryLatencies()

    /// Creates a dispatcher.
    /// - Parameters:
    ///   - directory: the configured back ends.
    ///   - inflightLimits: per app id, the most deliveries in flight (Sygnal's `inflight_request_limit`, default 512).
    ///   - store: where invalid tokens are recorded and the outbox lives.
    ///   - metrics: delivery metrics.
    ///   - wakeUp: nudged after an enqueue so the outbox worker starts at once.
    ///   - tally: where each delivery's outcome is counted (for the store's delivery counts).
    ///   - recentFailures: where failed deliveries are kept (token fingerprints only).
    public init(
        directory: ProviderDirectory,
        inflightLimits: [String: Int] = [:],
        store: any PushStore,
        metrics: DeliveryMetrics,
        wakeUp: OutboxWakeUp = OutboxWakeUp(),
        tally: DeliveryTally = DeliveryTally(),
        recentFailures: RecentFailures = RecentFailures(),
        logger: Logger
    ) {
        self.tally = tally
        self.recentFailures = recentFailures
        self.liveDirectory = LiveValue(directory)
        self.admission = AppAdmission(limits: inflightLimits)
        self.store = store
        self.metrics = metrics
        self.wakeUp = wakeUp
        self.groupCommit = OutboxGroupCommit(store: store, handOff: wakeUp.handOff)
        self.logger = logger
    }

    /// Takes a reloaded configuration's back ends: deliveries that already looked up a back end finish
    /// through it, later ones use the new directory.
    /// - Parameters:
    ///   - directory: every configured app's back end.
    ///   - inflightLimits: per app id, the most deliveries in flight.
    ///   - resetting: apps added, changed or removed, whose circuits start closed.
    public func reconfigure(_ directory: ProviderDirectory, inflightLimits: [String: Int], resetting: Set<String>) {
        self.liveDirectory.replace(directory)
        // The reloader reconfigures one reload at a time: a read and a write, not an atomic add, will do.
        self.reconfigured.replace(self.reconfigured.current + 1)
        self.admission.reconfigure(limits: inflightLimits, resetting: resetting)
        for appID in resetting {
            self.metrics.recordCircuit(appID: appID, open: false)
            self.metrics.recordCredentials(appID: appID, failing: false)
        }
    }

    /// Delivers one notification now and reports the outcome.
    /// - Parameters:
    ///   - notification: the provider-ready notification.
    ///   - appID: the app id as the device registered it (matched exactly, then by glob).
    ///   - token: the device token.
    ///   - timeout: how long the provider may take.
    ///   - frontEnd: the front end the notification came through, for the delivery counts.
    /// - Returns: the outcome; an unknown app is `rejected`, a full in-flight limit `retryLater`.
    public func deliver(
        _ notification: PushNotification, appID: String, token: String, timeout: Duration, frontEnd: String = "other"
    ) async -> DeliveryOutcome {
        guard case .found(let provider) = self.directory.lookup(appID) else {
            return .rejected(reason: "no app is configured for \(appID)")
        }
        return await self.deliver(notification, via: provider, token: token, deadline: .now + timeout, frontEnd: frontEnd)
    }

    /// Delivers through a provider the caller already looked up in ``directory`` (front ends that must
    /// tell unknown apps apart, and the outbox worker), with the same limits and bookkeeping.
    /// - Parameter frontEnd: the front end the notification came through, for the delivery counts.
    public func deliver(
        _ notification: PushNotification, via provider: any PushProvider, token: String, deadline: ContinuousClock.Instant, frontEnd: String
    ) async -> DeliveryOutcome {
        let probe: Bool
        let (verdict, generation) = self.admission.admit(provider.appID)
        switch verdict {
        case .admitted(let isProbe):
            probe = isProbe
        case .overLimit:
            self.metrics.recordInflightDrop(appID: provider.appID)
            return self.refused(.retryLater(after: nil, reason: "in-flight limit reached for \(provider.appID)"), appID: provider.appID, frontEnd: frontEnd)
        case .circuitOpen(let remaining, let requested):
            self.metrics.recordCircuitRefusal(appID: provider.appID)
            // The provider's own Retry-After when it gave one (so its pause is kept), else when the
            // circuit lets a probe through.
            let after = requested.map { max($0, remaining) } ?? (remaining > .zero ? remaining : nil)
            return self.refused(
                .retryLater(after: after, reason: "the provider of \(provider.appID) is failing (circuit open)"), appID: provider.appID, frontEnd: frontEnd
            )
        case .credentialsFailing(let remaining, let reason):
            self.metrics.recordCircuitRefusal(appID: provider.appID)
            return self.refused(
                .retryLater(after: remaining > .zero ? remaining : nil, reason: "the provider refuses the credentials of \(provider.appID): \(reason)"),
                appID: provider.appID, frontEnd: frontEnd
            )
        }
        let started = ContinuousClock.now
        let answered = await provider.deliver(notification, to: token, deadline: deadline)
        // A refused credential is the app's, not the device's or the notification's: front ends see a
        // retry-later outcome, and queued work waits for the credentials to work again.
        let outcome: DeliveryOutcome = if case .credentialsRefused(let reason) = answered {
            .retryLater(after: self.admission.credentialsProbeInterval, reason: "the provider refused the credentials of \(provider.appID): \(reason)")
        } else {
            answered
        }
        let duration = ContinuousClock.now - started
        self.metrics.record(appID: provider.appID, outcome: outcome, duration: duration)
        self.latencies.record(appID: provider.appID, duration: duration)
        self.count(outcome, appID: provider.appID, frontEnd: frontEnd, token: token)
        self.logger.debug(
            "delivery",
            metadata: ["app": "\(provider.appID)", "token": "\(Redaction.fingerprint(token))", "outcome": "\(outcome.label)"]
        )
        // A back end a reload retired (looked up before it, admitted after) moves the new one's circuit
        // and credentials state no more than one that was out during the reload.
        let counts = provider.sharesOneCircuit && self.directory.holds(provider)
        switch self.admission.release(provider.appID, outcome: answered, probe: probe, circuit: counts, generation: generation) {
        case .none:
            break
        case .opened(let interval, let failures):
            self.metrics.recordCircuit(appID: provider.appID, open: true)
            let reason: String = if case .retryLater(_, let why) = outcome { why } else { "" }
            self.logger.warning(
                "provider failing: its deliveries fail at once until a probe succeeds",
                metadata: ["app": "\(provider.appID)", "failures_in_a_row": "\(failures)", "probe_in": "\(interval)", "last_reason": "\(reason)"]
            )
        case .closed:
            self.metrics.recordCircuit(appID: provider.appID, open: false)
            self.logger.notice("provider recovered: deliveries resume", metadata: ["app": "\(provider.appID)", "outcome": "\(outcome.label)"])
        case .credentialsFailing(let reason):
            self.metrics.recordCredentials(appID: provider.appID, failing: true)
            self.logger.notice(
                "credentials failing: the provider refuses the app's credentials; its deliveries wait, with one probe a minute",
                metadata: ["app": "\(provider.appID)", "reason": "\(reason)"]
            )
        case .credentialsRecovered:
            self.metrics.recordCredentials(appID: provider.appID, failing: false)
            self.logger.notice("credentials work again: deliveries resume", metadata: ["app": "\(provider.appID)", "outcome": "\(outcome.label)"])
        }
        if case .invalidToken(let reason) = outcome {
            await self.recordInvalid(appID: provider.appID, token: token, reason: reason, removingRegistrations: outcome.tokenIsGone)
        }
        return outcome
    }

    /// A delivery refused before it reached the provider, counted with the deliveries' outcomes (on
    /// `/metrics` and the console) so an outage shows as the retries it causes; not kept among the recent
    /// failures, which the provider's own answers fill.
    private func refused(_ outcome: DeliveryOutcome, appID: String, frontEnd: String) -> DeliveryOutcome {
        self.metrics.recordRefused(appID: appID, outcome: outcome)
        self.tally.record(appID: appID, frontEnd: frontEnd, outcome: outcome.label, at: Date())
        return outcome
    }

    /// Counts a delivery's outcome and keeps a failure's fingerprint and reason.
    private func count(_ outcome: DeliveryOutcome, appID: String, frontEnd: String, token: String) {
        let now = Date()
        self.tally.record(appID: appID, frontEnd: frontEnd, outcome: outcome.label, at: now)
        guard let reason = outcome.failureReason else { return }
        self.recentFailures.record(
            RecentFailures.Failure(
                time: now, appID: appID, frontEnd: frontEnd, tokenFingerprint: Redaction.fingerprint(token), outcome: outcome.label, reason: reason
            )
        )
    }

    /// `appID`'s state on this instance now: deliveries in flight, its circuit (or that it has one per push
    /// service), its credentials and its provider's recent latency.
    public func state(of appID: String) -> DeliveryAppState {
        let snapshot = self.admission.snapshot(appID)
        var state = DeliveryAppState(
            inFlight: snapshot.inFlight, circuitOpen: snapshot.circuitOpen, credentialsFailing: snapshot.credentialsFailing,
            latencyMilliseconds: self.latencies.percentiles(appID: appID)
        )
        if case .found(let provider) = self.directory.lookup(appID), !provider.sharesOneCircuit { state.circuitsPerServer = true }
        return state
    }

    /// Whether `appID`'s provider is failing now (its circuit is open, see ``AppAdmission``).
    func isFailing(_ appID: String) -> Bool {
        self.admission.isOpen(appID)
    }

    /// Queues notifications in the outbox; they survive restarts and are retried until delivered, refused
    /// or too old.
    /// - Parameters:
    ///   - frontEnd: the front end that queues them (its name in logs, such as `gorush`): the outbox
    ///     worker takes turns across each app's front ends, so one front end's backlog does not hold back
    ///     another's notifications for the same app.
    ///   - report: when set, the front end it names hears each token's final outcome (see
    ///     ``DeliveryOutcomeObserver``).
    /// - Throws: a store error when they could not be stored (nothing was queued then).
    public func enqueue(
        _ notification: PushNotification, appID: String, frontEnd: String, tokens: [String], notBefore: Date = Date(),
        report: DeliveryReport? = nil
    ) async throws {
        try await self.enqueue([Queued(notification, appID: appID, frontEnd: frontEnd, tokens: tokens, report: report)], notBefore: notBefore)
    }

    /// Notifications for one app, queued together with others by ``enqueue(_:)``.
    public struct Queued: Sendable {
        /// The notification.
        public var notification: PushNotification
        /// The app that delivers it.
        public var appID: String
        /// The front end that queues it (its name in logs, such as `gorush`): the outbox's turns go by app
        /// and front end.
        public var frontEnd: String
        /// Its tokens.
        public var tokens: [String]
        /// Who hears the outcomes, if anyone.
        public var report: DeliveryReport?

        /// Creates a group.
        public init(_ notification: PushNotification, appID: String, frontEnd: String, tokens: [String], report: DeliveryReport? = nil) {
            self.notification = notification
            self.appID = appID
            self.frontEnd = frontEnd
            self.tokens = tokens
            self.report = report
        }
    }

    /// The most tokens of one notification in one outbox entry: the tokens of a notification share entries
    /// (one row each, not one a token). A worker's round takes whole entries, so this bounds how far a
    /// round may go past its ``OutboxWorker/Configuration/batchSize``.
    static let tokensPerOutboxEntry = 100

    /// Queues several notifications in one store write (shared with other callers' enqueues under load):
    /// all of them are queued or, when it throws, none.
    /// - Throws: a store error when they could not be stored.
    public func enqueue(_ groups: [Queued], notBefore: Date = Date()) async throws {
        var written: [OutboxGroupCommit.Group] = []
        written.reserveCapacity(groups.count)
        for group in groups where !group.tokens.isEmpty {
            let payload = try OutboxPayloadCoding.encode(group.notification, report: group.report)
            written.append(
                OutboxGroupCommit.Group(
                    // A slice of the whole array becomes an array sharing its storage.
                    messages: group.tokens.chunked(by: Self.tokensPerOutboxEntry).map {
                        OutboxMessage(appID: group.appID, frontEnd: group.frontEnd, pushTokens: Array($0), payload: payload, notBefore: notBefore)
                    },
                    notification: group.notification, report: group.report
                )
            )
        }
        guard !written.isEmpty else { return }
        try await self.groupCommit.enqueue(written)
        self.wakeUp.signal(apps: groups.lazy.filter { !$0.tokens.isEmpty }.map(\.appID))
    }

    /// Records a token the provider refused; removes its registrations only when the token is gone
    /// (``DeliveryOutcome/tokenIsGone``), not when it is another app's, which a misconfigured app would
    /// say of every token.
    private func recordInvalid(appID: String, token: String, reason: String, removingRegistrations: Bool) async {
        do {
            try await self.store.recordInvalidToken(InvalidTokenRecord(appID: appID, pushToken: token, reason: reason, recordedAt: Date()))
            let removed = removingRegistrations ? try await self.store.deleteDevices(appID: appID, pushToken: token) : 0
            self.logger.info(
                "provider reported an invalid token",
                metadata: ["app": "\(appID)", "token": "\(Redaction.fingerprint(token))", "reason": "\(reason)", "registrations_removed": "\(removed)"]
            )
        } catch {
            self.logger.error("could not record an invalid token", metadata: ["app": "\(appID)", "error": "\(error)"])
        }
    }
}
