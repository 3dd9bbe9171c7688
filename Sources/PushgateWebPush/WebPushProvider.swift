public import CoreMetrics
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
public import PushgateCore
import PushgateProviderSupport
public import ServiceLifecycle
import Synchronization

/// Delivers notifications to browsers' push services (RFC 8030) with `aes128gcm` encryption (RFC 8291) and
/// VAPID authentication (RFC 8292).
///
/// The provider keeps its own HTTP/1.1 connections to the push services (``HTTP1ConnectionPool``:
/// keep-alive, per origin, TLS for `https`, through the CONNECT proxy when one is set, no redirects); run
/// it as a `Service` so they are closed on graceful shutdown. At most `max_connections` requests are in flight,
/// at most three quarters of them to one push service (``OriginRequestSlots``; more wait for one until
/// their deadline, while one push service has at most half of `inflight_request_limit` running or
/// waiting: more are answered retry later at once), and at most `inflight_request_limit` deliveries
/// (encryption and waiting included) run at once: beyond that a delivery is refused at once.
///
/// Each push service (origin) has its own circuit (``OriginCircuits``): one that fails request after
/// request is left alone for a while, its deliveries answered retry later at once, while deliveries to the
/// others go on; the app shares no circuit (``sharesOneCircuit`` is false), as one app's subscriptions
/// name many services.
///
/// The `Urgency` and `Topic` headers are what the front end stated (``PushNotification/webPushUrgency``,
/// ``PushNotification/collapseID``), sent as they are; a collapse id that is not a valid `Topic` rejects
/// the notification (``DeliveryOutcome/rejected(reason:)``) before anything is sent.
public final class WebPushProvider: PushProvider, Service, CustomStringConvertible {
    /// The configured app id.
    public let appID: String
    /// Always ``Platform/webPush``.
    public var platform: Platform { .webPush }
    /// False: each push service's failures are its own (``OriginCircuits``).
    public var sharesOneCircuit: Bool { false }
    /// The app's `ttl` setting, sent when a notification states no time to live.
    public var defaultTimeToLive: Int? { self.configuration.ttl }

    private let configuration: WebPushConfiguration
    private let connections: HTTP1ConnectionPool
    private let signer: VAPIDSigner
    private let policy: PushEndpointPolicy
    private let requestSlots: OriginRequestSlots
    private let circuits: OriginCircuits
    /// Logs the circuits' changes and counts the push services whose circuit is open.
    private let circuitReporter: OriginCircuitReporter
    private let deliveries = Mutex(0)
    /// Subscriptions parsed from tokens, so a token is parsed once rather than on every delivery.
    private let subscriptions = WebPushSubscriptionCache()
    private let logger: Logger

    /// Creates the provider (connections open on first use); `metricsFactory` records its connections
    /// (``ProviderConnectionEvents``) and its failing push services as the app's metrics.
    public convenience init(configuration: WebPushConfiguration, logger: Logger, metricsFactory: (any MetricsFactory)? = nil) {
        self.init(
            configuration: configuration, logger: logger, policy: PushEndpointPolicy(allowedEndpoints: configuration.allowedEndpoints),
            events: ProviderConnectionEvents(appID: configuration.appID, factory: metricsFactory), metricsFactory: metricsFactory
        )
    }

    init(
        configuration: WebPushConfiguration, logger: Logger, policy: PushEndpointPolicy,
        events: ProviderConnectionEvents = ProviderConnectionEvents(), circuits: OriginCircuits.Settings = OriginCircuits.Settings(),
        metricsFactory: (any MetricsFactory)? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.circuits = OriginCircuits(settings: circuits)
        self.circuitReporter = OriginCircuitReporter(
            circuits: self.circuits, appID: configuration.appID, noun: "push service", logger: logger, metricsFactory: metricsFactory
        )
        self.appID = configuration.appID
        self.configuration = configuration
        self.logger = logger
        self.policy = policy
        self.signer = VAPIDSigner(key: configuration.vapidKey, contact: configuration.contact, now: now)
        self.requestSlots = OriginRequestSlots(permits: configuration.maxConnections, inFlightLimit: configuration.inflightRequestLimit)
        self.connections = HTTP1ConnectionPool(
            proxy: configuration.proxy, connectTimeout: .seconds(10),
            idleTimeout: .seconds(60), maximumIdlePerOrigin: configuration.maxConnections, events: events
        )
    }

    /// A short description without keys or endpoints.
    public var description: String {
        "WebPushProvider(app: \(self.appID), max_connections: \(self.configuration.maxConnections))"
    }

    /// Waits for graceful shutdown, then closes the connections.
    public func run() async throws {
        // The count of failing servers drops one nobody probes any more without a change to log.
        await cancelWhenGracefulShutdown { [reporter = self.circuitReporter] in
            await reporter.refreshEvery(.seconds(30))
        }
        await self.connections.shutdown()
    }

    /// Encrypts and posts `notification` to the subscription in `token`; never throws.
    public func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        let admitted = self.deliveries.withLock { count in
            guard count < self.configuration.inflightRequestLimit else { return false }
            count += 1
            return true
        }
        let result: (outcome: DeliveryOutcome, status: Int?)
        if admitted {
            result = await self.send(notification, to: token, deadline: deadline)
            self.deliveries.withLock { $0 -= 1 }
        } else {
            result = (.retryLater(after: nil, reason: "inflight_request_limit reached"), nil)
        }
        self.logger.debug(
            "webpush delivery",
            metadata: [
                "app": "\(self.appID)",
                "token": "\(Redaction.fingerprint(token))",
                "status": "\(result.status.map(String.init) ?? "-")",
                "outcome": "\(result.outcome.label)",
            ]
        )
        return result.outcome
    }

    private func send(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> (outcome: DeliveryOutcome, status: Int?) {
        let subscription: WebPushSubscription
        do {
            subscription = try self.subscriptions.subscription(for: token)
        } catch {
            return (.invalidToken(reason: error.reason), nil)
        }
        let topic: String?
        switch WebPushHeaders.topic(for: notification) {
        case .success(let valid): topic = valid
        case .failure(let invalid): return (.rejected(reason: invalid.reason), nil)
        }
        guard ContinuousClock.now < deadline else {
            return (.retryLater(after: nil, reason: "deadline passed before sending"), nil)
        }
        guard let origin = subscription.target.origin else {
            return (.rejected(reason: HTTP1ExchangeError.refused("the endpoint is not an http(s) URL").description), nil)
        }
        let probe: Bool
        switch self.circuits.admit(origin) {
        case .admitted(let isProbe): probe = isProbe
        case .open(let remaining):
            return (.retryLater(after: remaining > .zero ? remaining : nil, reason: "the push service failed request after request; it is left alone for a while"), nil)
        }
        let attempt = await self.attempt(notification, to: subscription, topic: topic, deadline: deadline)
        self.circuitReporter.record(origin, attempt.server, probe: probe)
        return (attempt.outcome, attempt.status)
    }

    /// Checks the endpoint, encrypts, signs and posts; what came of it, and what that tells of the push service.
    private func attempt(
        _ notification: PushNotification, to subscription: WebPushSubscription, topic: String?, deadline: ContinuousClock.Instant
    ) async -> (outcome: DeliveryOutcome, status: Int?, server: OriginCircuits.Result) {
        let addresses: [IPAddress]
        switch await self.policy.check(subscription.target.endpoint, deadline: deadline) {
        case .allowed(let checked): addresses = checked
        case .refused(let reason): return (.rejected(reason: reason), nil, .notSent)
        case .unresolved, .noSuchHost: return (.retryLater(after: nil, reason: "endpoint host did not resolve"), nil, .failed)
        // Nothing is known of the push service yet: not one of its failures.
        case .lookupUnfinished: return (.retryLater(after: nil, reason: "endpoint host lookup unfinished at the deadline"), nil, .notSent)
        }
        let body: [UInt8]
        do {
            // RFC 8291's key agreement is the costliest step of a delivery: off the event loop. A payload
            // over the limit goes in the smaller form the front end stated, if any.
            body = try await ComputePool.run {
                var plaintext = try JSONText.encode(notification.payload)
                if plaintext.count > WebPushEncryption.maximumPlaintextSize, let reduced = notification.reducedPayload {
                    plaintext = try JSONText.encode(reduced)
                }
                return try WebPushEncryption.encrypt(plaintext, for: subscription)
            }
        } catch WebPushEncryption.Failure.payloadTooLarge(let size, let limit) {
            return (.rejected(reason: "payload too large: \(size) bytes, Web Push takes at most \(limit)"), nil, .notSent)
        } catch {
            return (.rejected(reason: "payload could not be encrypted"), nil, .notSent)
        }
        let authorization: String
        do {
            authorization = try self.signer.authorization(forOrigin: subscription.target.origin)
        } catch {
            return (.rejected(reason: error.reason), nil, .notSent)
        }
        var headers = HTTP1HeaderLines()
        headers.reserveCapacity(128 + authorization.utf8.count)
        do {
            try headers.append(name: "TTL", value: String(notification.timeToLive ?? self.configuration.ttl))
            if let urgency = WebPushHeaders.urgency(for: notification) { try headers.append(name: "Urgency", value: urgency) }
            if let topic { try headers.append(name: "Topic", value: topic) }
            try headers.append(name: "Content-Encoding", value: "aes128gcm")
            try headers.append(name: "Content-Type", value: "application/octet-stream")
            try headers.append(name: "Authorization", value: authorization)
        } catch {
            return (.rejected(reason: error.description), nil, .notSent)
        }
        let outcome = await self.execute(subscription.target, at: addresses, headers: headers, body: ByteBuffer(bytes: body), deadline: deadline)
        return outcome ?? (.retryLater(after: nil, reason: "deadline passed"), nil, .notSent)
    }

    /// Waits for a request slot, posts, and reads the answer (the start of an error body), all before
    /// `deadline`, and what that tells of the push service; nil when the deadline passed while waiting for
    /// a slot.
    private func execute(
        _ endpoint: WebPushEndpoint, at addresses: [IPAddress], headers: HTTP1HeaderLines, body: ByteBuffer, deadline: ContinuousClock.Instant
    ) async -> (outcome: DeliveryOutcome, status: Int?, server: OriginCircuits.Result)? {
        guard let destination = endpoint.destination, let origin = endpoint.origin else {
            return (.rejected(reason: HTTP1ExchangeError.refused("the endpoint is not an http(s) URL").description), nil, .notSent)
        }
        switch await self.requestSlots.enter(origin, until: deadline) {
        case .entered: break
        case .notInTime: return nil
        case .lineFull:
            // Not the push service's failure: its share of the slots is busy and its line full.
            return (.retryLater(after: nil, reason: "too many requests to this push service are waiting already"), nil, .notSent)
        }
        defer { self.requestSlots.leave(origin) }
        do {
            let answer = try await self.connections.request(.POST, to: destination, at: addresses, headers: headers, body: body, deadline: deadline.nioDeadline)
            var text = ""
            if !(200...299).contains(answer.status) {
                text = WebPushResponse.excerpt(answer.body)
            }
            let outcome = WebPushResponse.outcome(status: answer.status, retryAfter: answer.retryAfter, body: text)
            // A 429 or 5xx is the service's trouble; any other answer shows it working.
            let server: OriginCircuits.Result = if case .retryLater = outcome { .failed } else { .answered }
            return (outcome, answer.status, server)
        } catch HTTP1ExchangeError.deadlineExceeded {
            return (.retryLater(after: nil, reason: "deadline passed"), nil, .failed)
        } catch let error as HTTP1ExchangeError where error.isRefusal {
            return (.rejected(reason: error.description), nil, .notSent)
        } catch {
            return (.retryLater(after: nil, reason: "transport error: \(Self.describe(error))"), nil, .failed)
        }
    }

    /// The error's description for our own exchange errors (they carry no URL), else its type; never a URL.
    private static func describe(_ error: any Error) -> String {
        if let exchangeError = error as? HTTP1ExchangeError { return exchangeError.description }
        if let sslError = error as? NIOSSLError { return "TLS: \(sslError)" }
        return String(describing: type(of: error))
    }
}
