public import CoreMetrics
public import Foundation
public import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
public import PushgateCore
import PushgateProviderSupport
public import ServiceLifecycle

/// Delivers notifications through the FCM HTTP v1 API for one `type: gcm` app.
///
/// Messages go over the provider's own keep-alive HTTP/1.1 connections (``PushAPIConnections``); the
/// access tokens they carry come from the service account's token endpoint through an `HTTPClient`
/// (an hourly request). Both are closed when ``run()`` ends. A `ConcurrencyGate` bounds concurrent
/// requests to `max_connections` (one per connection; more wait until their deadline) and deliveries
/// running or waiting to `inflight_request_limit` (beyond it a delivery is refused at once). Tokens,
/// keys and payloads never reach the log; tokens appear only as ``Redaction/fingerprint(_:)``.
public final class FCMProvider: PushProvider, Service, CustomStringConvertible {
    /// The configured app id (or glob).
    public let appID: String
    /// Always ``Platform/fcm``.
    public var platform: Platform { .fcm }
    /// The app's settings.
    public let configuration: FCMConfiguration
    /// The access-token cache (exposed for tests and diagnostics).
    public let accessTokens: GoogleAccessTokenProvider

    /// The message connections and the token endpoint's client.
    private let connections: PushAPIConnections
    private let gate: ConcurrencyGate
    private let bodies: FCMBodyCache
    /// The headers every message carries, made once for each access token.
    private let messageHeaders: BearerHeaderLines
    private let logger: Logger

    /// Creates the provider and its HTTP client.
    /// - Parameters:
    ///   - configuration: the app's checked settings.
    ///   - logger: where delivery failures are reported (without secrets).
    ///   - metricsFactory: records its connections as the app's metrics (``ProviderConnectionEvents``).
    ///   - now: the wall clock for access-token expiry, injectable for tests.
    /// - Throws: when the service account's key cannot be parsed.
    public init(
        configuration: FCMConfiguration, logger: Logger, metricsFactory: (any MetricsFactory)? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        let key = try configuration.serviceAccount.signingKey()
        let connections = PushAPIConnections(
            sendURL: configuration.sendURL, caFile: configuration.caFile, proxy: configuration.proxy, maxConnections: configuration.maxConnections,
            events: ProviderConnectionEvents(appID: configuration.appID, factory: metricsFactory)
        )
        self.connections = connections
        self.messageHeaders = BearerHeaderLines(
            fixed: HTTP1HeaderLines(constant: [("Content-Type", "application/json; charset=UTF-8"), ("User-Agent", "pushgate")])
        )
        self.appID = configuration.appID
        self.configuration = configuration
        self.logger = logger
        self.bodies = FCMBodyCache()
        self.gate = ConcurrencyGate(permits: configuration.maxConnections, limit: configuration.inflightRequestLimit)
        self.accessTokens = GoogleAccessTokenProvider(account: configuration.serviceAccount, key: key, httpClient: connections.tokenClient, now: now)
    }

    /// `fcm:<app id> (project <project id>)`.
    public var description: String {
        "fcm:\(self.appID) (project \(self.configuration.projectID), \(Redaction.displayURL(self.configuration.baseURL)))"
    }

    /// Waits for graceful shutdown, then closes the connections and the token endpoint's client.
    public func run() async throws {
        try? await gracefulShutdown()
        try await self.shutdown()
    }

    /// Closes the connections and the token endpoint's client without a service group (for code that
    /// does not run the provider as a service).
    public func shutdown() async throws {
        try await self.connections.shutdown()
    }

    /// Sends `notification` to the registration `token`; see ``DeliveryOutcome`` for the mapping.
    public func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        let outcome = await self.attemptDelivery(notification, to: token, deadline: deadline)
        switch outcome {
        case .delivered:
            self.logger.debug("FCM delivered", metadata: ["app": "\(self.appID)", "token": "\(Redaction.fingerprint(token))"])
        case .invalidToken(let reason), .rejected(let reason), .retryLater(_, let reason), .credentialsRefused(let reason):
            self.logger.info(
                "FCM delivery failed",
                metadata: ["app": "\(self.appID)", "token": "\(Redaction.fingerprint(token))", "outcome": "\(outcome.label)", "reason": "\(reason)"]
            )
        }
        return outcome
    }

    private func attemptDelivery(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        guard ContinuousClock.now < deadline else { return .retryLater(after: nil, reason: "deadline passed before sending") }
        guard let body = self.bodies.body(for: notification, token: token) else {
            return .rejected(reason: "the payload is not an FCM message object")
        }
        switch await self.gate.enter(until: deadline) {
        case .admitted:
            break
        case .full:
            return .retryLater(after: nil, reason: "inflight_request_limit (\(self.configuration.inflightRequestLimit)) reached")
        case .timedOut:
            return .retryLater(after: nil, reason: "deadline passed while waiting for a connection (max_connections \(self.configuration.maxConnections))")
        case .cancelled:
            return .retryLater(after: nil, reason: "cancelled while waiting for a connection (max_connections \(self.configuration.maxConnections))")
        }
        let outcome = await self.send(body, deadline: deadline)
        self.gate.leave()
        return outcome
    }

    /// Posts the message, refreshing the access token once when FCM refuses it.
    private func send(_ body: [UInt8], deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        for attempt in 1...2 {
            let accessToken: String
            do {
                accessToken = try await self.accessTokens.token(deadline: deadline)
            } catch let error as AccessTokenError {
                if let status = error.status, (400..<500).contains(status) {
                    // The token endpoint refused the service account (400, 401, 403).
                    return .credentialsRefused(reason: "no access token: \(error)")
                }
                return .retryLater(after: nil, reason: "no access token: \(error)")
            } catch {
                return .retryLater(after: nil, reason: "no access token: \(Self.describe(error))")
            }

            let response: HTTP1Answer
            do {
                response = try await self.connections.messages.request(
                    .POST, to: self.connections.sendDestination, headers: try self.messageHeaders.lines(for: accessToken),
                    body: ByteBuffer(bytes: body), deadline: deadline.nioDeadline
                )
            } catch let error as HTTP1ExchangeError where error.isRefusal {
                return .rejected(reason: error.description)
            } catch {
                return .retryLater(after: nil, reason: Self.describe(error))
            }
            if (200..<300).contains(response.status) { return .delivered }
            let retryAfter = response.retryAfter

            switch FCMFailure(status: response.status, body: Data(response.body)) {
            case .unregistered:
                return .invalidToken(reason: "UNREGISTERED")
            case .invalidRegistrationToken(let reason):
                return .invalidToken(reason: reason)
            case .senderIDMismatch:
                return .invalidToken(reason: "SENDER_ID_MISMATCH")
            case .invalidArgument(let reason):
                return .rejected(reason: reason)
            case .quotaExceeded:
                return .retryLater(after: RetryAfter.parse(retryAfter), reason: "QUOTA_EXCEEDED")
            case .unavailable(let reason):
                return .retryLater(after: RetryAfter.parse(retryAfter), reason: reason)
            case .internalError:
                return .retryLater(after: RetryAfter.parse(retryAfter), reason: "INTERNAL")
            case .unauthenticated:
                self.accessTokens.invalidate(accessToken)
                if attempt == 1 { continue }
                return .credentialsRefused(reason: "UNAUTHENTICATED: FCM refused a fresh access token")
            case .thirdPartyAuthentication:
                // The access token is good, and Android deliveries of the same project go on: refused for
                // this token's platform only, so the app's credentials are not marked failing.
                return .rejected(reason: "THIRD_PARTY_AUTH_ERROR: FCM refused the APNs or Web Push credentials stored in the Firebase project")
            case .refused(let reason):
                // 403 (PERMISSION_DENIED): the project's credentials, not the message.
                return response.status == 403 ? .credentialsRefused(reason: reason) : .rejected(reason: reason)
            }
        }
        return .credentialsRefused(reason: "UNAUTHENTICATED")
    }

    /// The error's description for our own exchange errors (they carry no URL), else its type; never a URL.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? HTTP1ExchangeError {
            if case .deadlineExceeded = error { return "deadline exceeded" }
            return "transport error: \(error)"
        }
        if let error = error as? NIOSSLError { return "transport error: TLS: \(error)" }
        return "transport error: \(type(of: error))"
    }
}

