public import CoreMetrics
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import PushgateCore
public import PushgateProviderSupport
public import ServiceLifecycle
import Synchronization

/// Posts notifications to UnifiedPush endpoints: the device token is the endpoint URL (a Matrix pusher's
/// `pushkey`), and the notification's payload, as JSON text of at most 4096 bytes, is the body, posted
/// to that URL exactly (query string included) with `TTL` and `Content-Encoding: aes128gcm`, as the
/// common-proxies Matrix gateway posts it.
///
/// Endpoints go through Web Push's endpoint policy (``PushEndpointPolicy``): `https` only (`http` for
/// hosts in `allowed_endpoints`), hosts resolved once and checked against special-purpose ranges (the
/// connection goes to the checked address), no redirects, every request bounded by `request_timeout` and
/// the caller's deadline, and at most 2 KiB of an answer's body read. An endpoint that cannot be used
/// (not an absolute `http(s)` URL, refused by the policy, on a host that does not exist) or that the push
/// server says is gone (404, 410, a redirect or another unexpected answer) is an invalid token; 413 is a
/// refusal of the message; 429, 5xx, timeouts, failed connections and failed lookups are retry later,
/// with the push server's `Retry-After`. Endpoints found gone are remembered for 10 minutes, failing
/// endpoints for a minute or their `Retry-After`, and hosts whose lookup failed for a minute
/// (`UnifiedPushEndpointMemory`), so repeated attempts cost no request. A push server that fails request
/// after request (timeouts, refused or lost connections) is left alone by its own circuit
/// (``OriginCircuits``: five failures in a row, 1 s doubling to 60 s, one probe): one slow answer from a
/// server that many users share does not hold up all of them.
public final class UnifiedPushProvider: PushProvider, Service, CustomStringConvertible {
    /// The configured app id.
    public let appID: String
    /// Always ``Platform/unifiedPush``.
    public var platform: Platform { .unifiedPush }
    /// Each endpoint host fails on its own: a host that is down must not open the app's circuit for the
    /// others (this back end keeps a circuit per push server itself).
    public var sharesOneCircuit: Bool { false }
    /// The app's `ttl` setting, sent when a notification states no time to live.
    public var defaultTimeToLive: Int? { self.configuration.ttl }

    private let configuration: UnifiedPushConfiguration
    private let connections: HTTP1ConnectionPool
    private let policy: PushEndpointPolicy
    private let requestSlots: OriginRequestSlots
    private let deliveries = Mutex(0)
    private let memory = UnifiedPushEndpointMemory()
    /// One circuit per push server: one that fails request after request is left alone for a while.
    private let circuits: OriginCircuits
    /// Logs the circuits' changes and counts the push servers whose circuit is open.
    private let circuitReporter: OriginCircuitReporter
    private let hostMetrics: UnifiedPushHostMetrics
    private let logger: Logger

    /// Creates the provider (connections open on first use); `metricsFactory` records its connections and
    /// deliveries by host as the app's metrics.
    public convenience init(configuration: UnifiedPushConfiguration, logger: Logger, metricsFactory: (any MetricsFactory)? = nil) {
        self.init(configuration: configuration, logger: logger, resolver: .system, metricsFactory: metricsFactory)
    }

    /// Creates the provider with a given resolver (tests give fixed answers).
    public init(
        configuration: UnifiedPushConfiguration, logger: Logger, resolver: HostResolver, circuits: OriginCircuits.Settings = OriginCircuits.Settings(),
        metricsFactory: (any MetricsFactory)? = nil
    ) {
        self.circuits = OriginCircuits(settings: circuits)
        self.circuitReporter = OriginCircuitReporter(
            circuits: self.circuits, appID: configuration.appID, noun: "push server", logger: logger, metricsFactory: metricsFactory
        )
        self.appID = configuration.appID
        self.configuration = configuration
        self.logger = logger
        self.policy = PushEndpointPolicy(allowedEndpoints: configuration.allowedEndpoints, resolver: resolver)
        self.requestSlots = OriginRequestSlots(permits: configuration.maxConnections, inFlightLimit: configuration.inflightRequestLimit)
        self.hostMetrics = UnifiedPushHostMetrics(appID: configuration.appID, factory: metricsFactory)
        self.connections = HTTP1ConnectionPool(
            proxy: configuration.proxy, connectTimeout: .seconds(5), idleTimeout: .seconds(60),
            maximumIdlePerOrigin: configuration.maxConnections, events: ProviderConnectionEvents(appID: configuration.appID, factory: metricsFactory)
        )
    }

    /// A short description without endpoints.
    public var description: String {
        "UnifiedPushProvider(app: \(self.appID), max_connections: \(self.configuration.maxConnections))"
    }

    /// Waits for graceful shutdown, then closes the connections.
    public func run() async throws {
        // The count of failing servers drops one nobody probes any more without a change to log.
        await cancelWhenGracefulShutdown { [reporter = self.circuitReporter] in
            await reporter.refreshEvery(.seconds(30))
        }
        await self.connections.shutdown()
    }

    /// Posts `notification`'s payload to the endpoint URL `token`; never throws.
    public func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        let admitted = self.deliveries.withLock { count in
            guard count < self.configuration.inflightRequestLimit else { return false }
            count += 1
            return true
        }
        // Read for every delivery: the plain form of nearly every endpoint reads in a few hundred
        // nanoseconds, less than a cache of read endpoints would cost in hashing and memory.
        let endpoint = PushEndpoint(text: token)
        // The `host[:port]` that metrics and the memory of failing hosts go by.
        let host = endpoint?.hostAndPort?.lowercased()
        let result: (outcome: DeliveryOutcome, status: Int?)
        if admitted {
            result = await self.send(notification, to: token, endpoint: endpoint, deadline: deadline)
            self.deliveries.withLock { $0 -= 1 }
        } else {
            result = (.retryLater(after: nil, reason: "inflight_request_limit reached"), nil)
        }
        self.hostMetrics.record(host: host, outcome: result.outcome.label)
        self.logger.debug(
            "unifiedpush delivery",
            metadata: [
                "app": "\(self.appID)",
                "host": "\(host ?? "-")",
                "token": "\(Redaction.fingerprint(token))",
                "status": "\(result.status.map(String.init) ?? "-")",
                "outcome": "\(result.outcome.label)",
            ]
        )
        return result.outcome
    }

    private func send(
        _ notification: PushNotification, to token: String, endpoint: PushEndpoint?, deadline: ContinuousClock.Instant
    ) async -> (outcome: DeliveryOutcome, status: Int?) {
        // An endpoint with an origin has a host.
        guard let endpoint, let scheme = endpoint.scheme, scheme == "https" || scheme == "http", endpoint.destination != nil,
            let origin = endpoint.origin
        else {
            return (.invalidToken(reason: "the pushkey is not an absolute https URL"), nil)
        }
        // Failing hosts are remembered by origin, so `https://host` and `https://host:443` are one host.
        let hostKey = UnifiedPushEndpointMemory.Key.host(origin)
        let endpointKey = UnifiedPushEndpointMemory.Key.endpoint(token)
        switch self.memory.recall(endpoint: token, host: origin) {
        case .gone?:
            return (.invalidToken(reason: "the endpoint was found gone in the last 10 minutes"), nil)
        case .unavailable(let remaining)?:
            return (.retryLater(after: remaining, reason: "the endpoint or its host failed a moment ago"), nil)
        case nil:
            break
        }
        let body: [UInt8]
        do {
            body = try notification.payloadText()
        } catch {
            return (.rejected(reason: "the payload cannot be written as JSON"), nil)
        }
        guard body.count <= UnifiedPush.maximumBodySize else {
            return (.rejected(reason: "payload too large: \(body.count) bytes, UnifiedPush takes at most \(UnifiedPush.maximumBodySize)"), nil)
        }
        guard ContinuousClock.now < deadline else {
            return (.retryLater(after: nil, reason: "deadline passed before sending"), nil)
        }
        let addresses: [IPAddress]
        switch await self.policy.check(endpoint, deadline: deadline) {
        case .allowed(let checked):
            addresses = checked
        case .refused(let reason):
            return (.invalidToken(reason: reason), nil)
        case .noSuchHost:
            self.memory.rememberGone(hostKey)
            return (.invalidToken(reason: "the endpoint's host does not exist"), nil)
        case .unresolved:
            self.memory.rememberUnavailable(hostKey, pause: nil)
            return (.retryLater(after: nil, reason: "the endpoint's host did not resolve"), nil)
        case .lookupUnfinished:
            // Nothing is known of the host yet: the host is not remembered as unavailable.
            return (.retryLater(after: nil, reason: "the endpoint's host lookup was unfinished at the deadline"), nil)
        }
        var headers = HTTP1HeaderLines()
        do {
            try headers.append(name: "TTL", value: String(notification.timeToLive ?? self.configuration.ttl))
            if let urgency = notification.webPushUrgency { try headers.append(name: "Urgency", value: urgency.rawValue) }
            try headers.append(name: "Content-Encoding", value: UnifiedPush.contentEncoding)
            try headers.append(name: "User-Agent", value: "Pushgate/\(PushgateVersion.current)")
        } catch {
            return (.rejected(reason: error.description), nil)
        }
        let probe: Bool
        switch self.circuits.admit(origin) {
        case .admitted(let isProbe): probe = isProbe
        case .open(let remaining):
            return (.retryLater(after: remaining > .zero ? remaining : nil, reason: "the push server failed request after request; it is left alone for a while"), nil)
        }
        let (exchange, server) = await self.exchange(notification, body: body, endpoint: endpoint, at: addresses, headers: headers, deadline: deadline)
        self.circuitReporter.record(origin, server, probe: probe)
        guard let (outcome, status) = exchange else {
            return (.retryLater(after: nil, reason: "no request slot before the deadline"), nil)
        }
        switch outcome {
        case .transport(let outcome, _):
            return (outcome, nil)
        case .answered(let outcome, let memory):
            switch memory {
            case .none: break
            case .endpointGone: self.memory.rememberGone(endpointKey)
            case .endpointUnavailable(let pause): self.memory.rememberUnavailable(endpointKey, pause: pause)
            }
            return (outcome, status)
        }
    }

    /// Posts `body`, and when the push server refuses it as too large (413), the smaller form the front end
    /// stated, if any (a queued Matrix notification's `event_id_only` form), at once. The result is nil
    /// when no request slot was free before the deadline; `server` is what the posts tell of the push
    /// server (answered when either was answered).
    private func exchange(
        _ notification: PushNotification, body: [UInt8], endpoint: PushEndpoint, at addresses: [IPAddress], headers: HTTP1HeaderLines,
        deadline: ContinuousClock.Instant
    ) async -> (result: (Exchange, Int?)?, server: OriginCircuits.Result) {
        let first = await self.post(endpoint, at: addresses, headers: headers, body: body, deadline: deadline)
        guard let first, first.1 == 413, let reduced = notification.reducedPayload, let smaller = try? JSONText.encode(reduced), smaller != body,
            ContinuousClock.now < deadline
        else { return (first, Self.server(first?.0)) }
        let second = await self.post(endpoint, at: addresses, headers: headers, body: smaller, deadline: deadline)
        let server = Self.server(second?.0)
        return (second, server == .notSent ? .answered : server)
    }

    /// What a request tells of its push server; nil: no request slot.
    private static func server(_ exchange: Exchange?) -> OriginCircuits.Result {
        switch exchange {
        case .answered?: .answered
        case .transport(_, hostFailing: true)?: .failed
        case .transport(_, hostFailing: false)?, nil: .notSent
        }
    }

    /// What became of one request.
    private enum Exchange {
        /// The push server answered.
        case answered(DeliveryOutcome, UnifiedPushAnswer.Memory)
        /// It did not; `hostFailing` when that counts against the push server (its circuit).
        case transport(DeliveryOutcome, hostFailing: Bool)
    }

    /// Waits for a request slot until `deadline`, then posts and reads the answer within `request_timeout`
    /// (and the deadline); nil when the deadline passed while waiting for a slot. Time spent waiting is
    /// not the push server's: its request timeout starts once the slot is taken.
    private func post(
        _ endpoint: PushEndpoint, at addresses: [IPAddress], headers: HTTP1HeaderLines, body: [UInt8], deadline: ContinuousClock.Instant
    ) async -> (Exchange, Int?)? {
        guard let destination = endpoint.destination, let origin = endpoint.origin else {
            return (.transport(.invalidToken(reason: "the pushkey is not an absolute https URL"), hostFailing: false), nil)
        }
        switch await self.requestSlots.enter(origin, until: deadline) {
        case .entered: break
        case .notInTime: return nil
        case .lineFull:
            // Not the push server's failure: its share of the slots is busy and its line full.
            return (.transport(.retryLater(after: nil, reason: "too many requests to this push server are waiting already"), hostFailing: false), nil)
        }
        defer { self.requestSlots.leave(origin) }
        let started = ContinuousClock.now
        let requestDeadline = min(deadline, started + self.configuration.requestTimeout)
        do {
            let answer = try await self.connections.request(
                .POST, to: destination, at: addresses, headers: headers, body: ByteBuffer(bytes: body), deadline: requestDeadline.nioDeadline
            )
            let classified = UnifiedPushAnswer.classify(status: answer.status, retryAfter: answer.retryAfter)
            return (.answered(classified.outcome, classified.memory), answer.status)
        } catch HTTP1ExchangeError.deadlineExceeded {
            // A request the caller's deadline cut short (under its timeout and a second) says nothing of
            // the push server.
            let fair = requestDeadline - started >= min(self.configuration.requestTimeout, .seconds(1))
            return (.transport(.retryLater(after: nil, reason: "the push server did not answer in time"), hostFailing: fair), nil)
        } catch let error as HTTP1ExchangeError where error.isRefusal {
            // The URL cannot be written as a request (control bytes in it): it can never be used.
            return (.transport(.invalidToken(reason: error.description), hostFailing: false), nil)
        } catch {
            // Refused or lost connections and TLS failures are retried, not rejected: a push server that is
            // restarting, or whose certificate renewal went wrong, must not make homeservers delete every
            // pusher on it.
            return (.transport(.retryLater(after: nil, reason: "transport error: \(Self.describe(error))"), hostFailing: true), nil)
        }
    }

    /// The error's description for our own exchange errors (they carry no URL), else its type; never a URL.
    private static func describe(_ error: any Error) -> String {
        if let exchangeError = error as? HTTP1ExchangeError { return exchangeError.description }
        return String(describing: type(of: error))
    }
}
