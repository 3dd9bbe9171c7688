public import CoreMetrics
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import PushgateCore
import PushgateProviderSupport
public import ServiceLifecycle

/// Delivers notifications through Huawei Push Kit for one `type: hms` app: one `messages:send` request
/// per token (so each token gets its own outcome), with an OAuth access token that is cached, refreshed
/// before it expires and renewed once when the push server refuses it.
///
/// Messages go over the provider's own keep-alive HTTP/1.1 connections and the OAuth token endpoint is
/// reached through an `HTTPClient` (``PushAPIConnections``). At most `max_connections` requests are in
/// flight, and at most `inflight_request_limit` wait or run; the
/// app secret, access tokens and device tokens never reach the log (tokens as fingerprints only).
public final class HMSProvider: PushProvider, Service, CustomStringConvertible {
    /// The configured app id (or glob).
    public let appID: String
    /// Always ``Platform/hms``.
    public var platform: Platform { .hms }
    /// The app's settings.
    public let configuration: HMSConfiguration

    /// The message connections and the token endpoint's client.
    private let connections: PushAPIConnections
    private let accessTokens: HMSAccessTokens
    private let gate: ConcurrencyGate
    /// The headers every message carries, made once for each access token.
    private let messageHeaders: BearerHeaderLines
    private let logger: Logger

    /// Creates the provider, its connection pool and the token endpoint's client; `metricsFactory` records
    /// its connections as the app's metrics (``ProviderConnectionEvents``).
    public init(configuration: HMSConfiguration, logger: Logger, metricsFactory: (any MetricsFactory)? = nil) {
        let connections = PushAPIConnections(
            sendURL: configuration.sendURL, caFile: configuration.caFile, proxy: configuration.proxy, maxConnections: configuration.maxConnections,
            events: ProviderConnectionEvents(appID: configuration.appID, factory: metricsFactory)
        )
        self.connections = connections
        self.messageHeaders = BearerHeaderLines(fixed: HTTP1HeaderLines(constant: [("Content-Type", "application/json;charset=utf-8")]))
        self.appID = configuration.appID
        self.configuration = configuration
        self.accessTokens = HMSAccessTokens(
            tokenURL: configuration.tokenURL, clientID: configuration.hmsAppID, clientSecret: configuration.appSecret, httpClient: connections.tokenClient
        )
        self.gate = ConcurrencyGate(permits: configuration.maxConnections, limit: configuration.inflightRequestLimit)
        self.logger = logger
    }

    public var description: String { "hms:\(self.appID) (\(Redaction.displayURL(self.configuration.baseURL)))" }

    /// Waits for graceful shutdown, then closes the connections and the token endpoint's client.
    public func run() async throws {
        try? await gracefulShutdown()
        try await self.shutdown()
    }

    /// Closes the connections and the token endpoint's client without a service group.
    public func shutdown() async throws {
        try await self.connections.shutdown()
    }

    /// How many access tokens were fetched (tests and diagnostics).
    public var accessTokenFetches: Int {
        self.accessTokens.fetchCount
    }

    /// Sends `notification` to `token` (or to the topic or condition its payload names).
    public func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        let outcome = await self.attempt(notification, to: token, deadline: deadline)
        if case .delivered = outcome {
            self.logger.debug("HMS delivered", metadata: ["app": "\(self.appID)", "token": "\(Redaction.fingerprint(token))"])
        } else {
            self.logger.info(
                "HMS delivery failed", metadata: ["app": "\(self.appID)", "token": "\(Redaction.fingerprint(token))", "outcome": "\(outcome.label)"]
            )
        }
        return outcome
    }

    private func attempt(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        guard ContinuousClock.now < deadline else { return .retryLater(after: nil, reason: "deadline passed before sending") }
        guard let message = HMSMessage.body(notification: notification, token: token), let body = try? JSONText.encode(message) else {
            return .rejected(reason: "the payload is not an HMS message object")
        }
        switch await self.gate.enter(until: deadline) {
        case .admitted: break
        case .full: return .retryLater(after: nil, reason: "inflight_request_limit (\(self.configuration.inflightRequestLimit)) reached")
        case .timedOut, .cancelled: return .retryLater(after: nil, reason: "no connection was free before the deadline")
        }
        defer { self.gate.leave() }
        for attempt in 1...2 {
            let accessToken: String
            do {
                accessToken = try await self.accessTokens.token(deadline: deadline)
            } catch let failure as HMSAccessTokens.Failure {
                if let status = failure.status, (400..<500).contains(status) { return .credentialsRefused(reason: "no access token: \(failure)") }
                return .retryLater(after: nil, reason: "no access token: \(failure)")
            } catch {
                return .retryLater(after: nil, reason: "no access token: the token endpoint cannot be reached")
            }
            let response: HTTP1Answer
            do {
                response = try await self.connections.messages.request(
                    .POST, to: self.connections.sendDestination, headers: try self.messageHeaders.lines(for: accessToken),
                    body: ByteBuffer(bytes: body), deadline: deadline.nioDeadline
                )
            } catch HTTP1ExchangeError.deadlineExceeded {
                return .retryLater(after: nil, reason: "deadline exceeded")
            } catch let error as HTTP1ExchangeError where error.isRefusal {
                return .rejected(reason: error.description)
            } catch {
                return .retryLater(after: nil, reason: "transport error")
            }
            switch HMSResponseClassifier.classify(status: response.status, body: Data(response.body), retryAfter: RetryAfter.parse(response.retryAfter)) {
            case .outcome(let outcome): return outcome
            case .renewAccessTokenAndRetry:
                self.accessTokens.invalidate(accessToken)
                if attempt == 2 { return .credentialsRefused(reason: "the push server refused a fresh access token") }
            }
        }
        return .credentialsRefused(reason: "the push server refused a fresh access token")
    }
}
