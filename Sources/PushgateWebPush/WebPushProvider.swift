import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import PushgateCore
import PushgateProviderSupport
public import ServiceLifecycle
import Synchronization

/// Delivers notifications to browsers' push services (RFC 8030) with `aes128gcm` encryption (RFC 8291) and
/// VAPID authentication (RFC 8292).
///
/// The provider owns one HTTP client; run it as a `Service` so the client is shut down on graceful
/// shutdown. At most `max_connections` requests are in flight (a `ConcurrencyGate` with that many
/// permits; more wait for one until their deadline), and at most `inflight_request_limit` deliveries
/// (encryption and waiting included) run at once: beyond that a delivery is refused at once.
public final class WebPushProvider: PushProvider, Service, CustomStringConvertible {
    /// The configured app id.
    public let appID: String
    /// Always ``Platform/webPush``.
    public var platform: Platform { .webPush }

    private let configuration: WebPushConfiguration
    private let client: HTTPClient
    private let signer: VAPIDSigner
    private let policy: WebPushEndpointPolicy
    private let requestSlots: ConcurrencyGate
    private let deliveries = Mutex(0)
    /// Subscriptions parsed from tokens, so a token is parsed once rather than on every delivery.
    private let subscriptions = WebPushSubscriptionCache()
    private let logger: Logger
    /// The logger handed to the HTTP client: its trace output carries request heads (endpoint paths), so it
    /// never goes below `info`.
    private let clientLogger: Logger

    /// The most error-body bytes kept for a reason.
    static let errorBodyLimit = 2048

    /// Creates the provider and its HTTP client.
    public convenience init(configuration: WebPushConfiguration, logger: Logger) {
        self.init(configuration: configuration, logger: logger, policy: WebPushEndpointPolicy(allowedEndpoints: configuration.allowedEndpoints))
    }

    init(configuration: WebPushConfiguration, logger: Logger, policy: WebPushEndpointPolicy, now: @escaping @Sendable () -> Date = { Date() }) {
        self.appID = configuration.appID
        self.configuration = configuration
        self.logger = logger
        var clientLogger = logger
        clientLogger.logLevel = max(logger.logLevel, .info)
        self.clientLogger = clientLogger
        self.policy = policy
        self.signer = VAPIDSigner(key: configuration.vapidKey, contact: configuration.contact, now: now)
        self.requestSlots = ConcurrencyGate(permits: configuration.maxConnections)
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.redirectConfiguration = .disallow
        clientConfiguration.timeout = .init(connect: .seconds(10))
        clientConfiguration.proxy = configuration.proxy?.clientProxy
        clientConfiguration.skipNoOpTracing()
        clientConfiguration.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maxConnections
        )
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
    }

    /// A short description without keys or endpoints.
    public var description: String {
        "WebPushProvider(app: \(self.appID), max_connections: \(self.configuration.maxConnections))"
    }

    /// Waits for graceful shutdown, then shuts the HTTP client down.
    public func run() async throws {
        try? await gracefulShutdown()
        try await self.client.shutdown()
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
        guard ContinuousClock.now < deadline else {
            return (.retryLater(after: nil, reason: "deadline passed before sending"), nil)
        }
        switch await self.policy.check(subscription.endpoint) {
        case .allowed: break
        case .refused(let reason): return (.rejected(reason: reason), nil)
        case .unresolved: return (.retryLater(after: nil, reason: "endpoint host did not resolve"), nil)
        }
        let body: [UInt8]
        do {
            body = try WebPushEncryption.encrypt(try JSONText.encode(notification.payload), for: subscription)
        } catch WebPushEncryption.Failure.payloadTooLarge {
            return (.rejected(reason: "payload too large"), nil)
        } catch {
            return (.rejected(reason: "payload could not be encrypted"), nil)
        }
        let authorization: String
        do {
            authorization = try await self.signer.authorization(for: subscription.endpoint)
        } catch {
            return (.rejected(reason: error.reason), nil)
        }
        var request = HTTPClientRequest(url: subscription.endpoint.absoluteString)
        request.method = .POST
        request.headers.add(name: "TTL", value: String(notification.timeToLive ?? self.configuration.ttl))
        request.headers.add(name: "Urgency", value: WebPushHeaders.urgency(for: notification))
        if let collapseID = notification.collapseID {
            request.headers.add(name: "Topic", value: WebPushHeaders.topic(forCollapseID: collapseID))
        }
        request.headers.add(name: "Content-Encoding", value: "aes128gcm")
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.headers.add(name: "Authorization", value: authorization)
        request.body = .bytes(ByteBuffer(bytes: body))
        let outcome = await self.execute(request, deadline: deadline)
        return outcome ?? (.retryLater(after: nil, reason: "deadline passed"), nil)
    }

    /// Waits for a request slot, posts, and reads the answer, all before `deadline`; nil when the deadline
    /// passed (or the task was cancelled) while waiting for a slot or reading an error answer.
    ///
    /// The wait for a slot ends at the deadline, and the client's own deadline covers the request until the
    /// answer's head; only reading an error body needs a timer of its own.
    private func execute(_ request: HTTPClientRequest, deadline: ContinuousClock.Instant) async -> (outcome: DeliveryOutcome, status: Int?)? {
        guard await self.requestSlots.enter(until: deadline) == .admitted else { return nil }
        defer { self.requestSlots.leave() }
        do {
            let response = try await self.client.execute(request, deadline: Self.nioDeadline(deadline), logger: self.clientLogger)
            let status = Int(response.status.code)
            var text = ""
            if !(200...299).contains(status) {
                guard let errorText = try await Self.errorText(of: response, until: deadline) else { return nil }
                text = errorText
            }
            let outcome = WebPushResponse.outcome(status: status, retryAfter: response.headers.first(name: "Retry-After"), body: text)
            return (outcome, status)
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return (.retryLater(after: nil, reason: "deadline passed"), nil)
        } catch {
            return (.retryLater(after: nil, reason: "transport error: \(Self.describe(error))"), nil)
        }
    }

    /// The start of an error answer's body (at most ``errorBodyLimit`` bytes), trimmed; nil when `deadline`
    /// passed first.
    private static func errorText(of response: HTTPClientResponse, until deadline: ContinuousClock.Instant) async throws -> String? {
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                var bytes: [UInt8] = []
                for try await chunk in response.body {
                    bytes += chunk.readableBytesView.prefix(Self.errorBodyLimit - bytes.count)
                    if bytes.count >= Self.errorBodyLimit { break }
                }
                return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The error's type and, for HTTP client errors, their short description; never a URL.
    private static func describe(_ error: any Error) -> String {
        if let clientError = error as? HTTPClientError { return clientError.shortDescription }
        return String(describing: type(of: error))
    }

    private static func nioDeadline(_ deadline: ContinuousClock.Instant) -> NIODeadline {
        let remaining = max(.zero, deadline - ContinuousClock.now)
        let (seconds, attoseconds) = remaining.components
        return .now() + .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
