public import CoreMetrics
public import Foundation
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PushgateConfig
public import PushgateCore
import PushgateProviderSupport
public import ServiceLifecycle
import Synchronization

/// Delivers notifications for one APNs app over HTTP/2, with token or certificate authentication.
///
/// Run it as a `Service`: it keeps its HTTP/2 connections until graceful shutdown. There is one
/// ``APNsConnection`` per event loop of the shared group, each pinned to its loop, so requests spread over
/// one HTTP/2 connection per loop (as Apple suggests several connections for volume) instead of all being
/// multiplexed, encrypted and parsed on a single thread. A request that runs on an event loop goes over that
/// loop's connection. Requests are streams of the client's own HTTP/2
/// framing (``APNsHTTP2Handler``), and each connection sends what one event-loop tick wrote in one write.
///
/// At most `inflight_request_limit` requests are in flight at once (a `ConcurrencyGate` with that many
/// permits); more wait for a free one until their deadline.
public final class APNsProvider: PushProvider, Service, CustomStringConvertible {
    /// The app id (or glob) the provider serves.
    public let appID: String
    /// Always `.apns`.
    public var platform: Platform { .apns }
    /// The app's settings.
    public let configuration: APNsConfiguration
    /// The provider token source for token authentication; nil with a client certificate.
    public let providerToken: APNsProviderToken?

    private let connections: [APNsConnection]
    private let nextConnection = Atomic<UInt>(0)
    private let requests: APNsRequestFactory
    private let gate: ConcurrencyGate
    private let logger: Logger

    /// Creates the provider and its HTTP clients.
    /// - Parameters:
    ///   - configuration: the app's settings.
    ///   - logger: where requests are logged (fingerprints only, at debug).
    ///   - metricsFactory: where the connections' metrics go (``APNsConnectionEvents``); none when nil.
    ///   - now: the wall clock for provider tokens and `apns-expiration`; tests inject their own.
    ///   - tokens: where the provider token of a key is shared with other apps using the same key (and the
    ///     app's next back end after a reload); nil: this provider signs its own.
    /// - Throws: when the client certificate or key cannot be loaded.
    public init(
        configuration: APNsConfiguration, logger: Logger = Logger(label: "pushgate.apns"), metricsFactory: (any MetricsFactory)? = nil,
        now: @escaping @Sendable () -> Date = Date.init, tokens: APNsProviderTokenRegistry? = nil
    ) throws {
        self.appID = configuration.appID
        self.configuration = configuration
        self.logger = logger
        self.requests = APNsRequestFactory(topic: configuration.topic)
        self.gate = ConcurrencyGate(permits: configuration.inflightRequestLimit)

        var tls = TLSConfiguration.makeClientConfiguration()
        if !configuration.additionalTrustRoots.isEmpty {
            tls.additionalTrustRoots = [.certificates(configuration.additionalTrustRoots)]
        }
        switch configuration.authentication {
        case .certificate(let file):
            tls.certificateChain = try NIOSSLCertificate.fromPEMFile(file).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: file, format: .pem))
            self.providerToken = nil
        case .token(let key, let keyID, let teamID):
            self.providerToken = tokens?.token(key: key, keyID: keyID, teamID: teamID)
                ?? APNsProviderToken(key: key, keyID: keyID, teamID: teamID, now: now)
        }
        tls.applicationProtocols = ["h2"]
        let target = APNsConnection.Target(
            host: configuration.baseURL.host ?? "", port: configuration.baseURL.port ?? 443,
            tls: try NIOSSLContext(configuration: tls), proxy: configuration.proxy, liveness: configuration.liveness
        )
        let events = metricsFactory.map { APNsConnectionEvents(appID: configuration.appID, factory: $0) } ?? APNsConnectionEvents()
        self.connections = MultiThreadedEventLoopGroup.singleton.makeIterator().map { loop in
            APNsConnection(eventLoop: loop, target: target, events: events)
        }
        self.now = now
        self.devicePathPrefix = configuration.baseURL.path + "/3/device/"
    }

    private let now: @Sendable () -> Date
    /// The base URL's path (normally empty) and `/3/device/`, to which each request appends its token.
    private let devicePathPrefix: String

    /// `APNsProvider(<app>, topic <topic>, token <key id>, <host>)`; no secrets.
    public var description: String {
        "APNsProvider(\(self.appID), topic \(self.configuration.topic), \(self.configuration.authentication), \(self.configuration.baseURL.host ?? "?"))"
    }

    /// Keeps the connections until graceful shutdown, then closes them.
    public func run() async throws {
        try? await gracefulShutdown()
        try await self.shutdown()
    }

    /// Closes the connections, for a provider used without ``run()``; call it once.
    public func shutdown() async throws {
        for connection in self.connections { await connection.shutdown() }
    }

    /// Sends `notification` to the hex device token `token`, giving up at `deadline`.
    public func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        guard ContinuousClock.now < deadline else {
            return .retryLater(after: nil, reason: "deadline passed before sending")
        }
        guard Self.isSafePathSegment(token) else {
            // APNs answers BadDeviceToken for these; a token with `/` or `?` must not reach the URL.
            return .invalidToken(reason: "BadDeviceToken")
        }
        let body: [UInt8]
        do {
            body = try JSONText.encode(notification.payload)
        } catch {
            return .rejected(reason: "payload cannot be encoded as JSON")
        }
        if let problem = self.requests.problem(with: notification, body: body) {
            self.logger.debug("APNs notification refused before sending", metadata: ["token": "\(Redaction.fingerprint(token))", "reason": "\(problem)"])
            return .rejected(reason: problem)
        }
        let outcome = await self.gate.withPermit(until: deadline) {
            await self.send(notification, body: body, to: token, deadline: deadline, mayRenewToken: true)
        }
        return outcome ?? .retryLater(after: nil, reason: "in-flight limit reached until the deadline")
    }

    private func send(
        _ notification: PushNotification,
        body: [UInt8],
        to token: String,
        deadline: ContinuousClock.Instant,
        mayRenewToken: Bool,
        mayResend: Bool = true
    ) async -> DeliveryOutcome {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else {
            return .retryLater(after: nil, reason: "deadline passed before sending")
        }
        var headers = self.requests.headers(for: notification, apnsID: SecureRandomPool.shared.uuid(), now: self.now())
        headers.append(("content-type", "application/json"))
        var bearer: String?
        if let providerToken = self.providerToken {
            do {
                let jwt = try providerToken.token()
                bearer = jwt
                headers.append(("authorization", "bearer \(jwt)"))
            } catch {
                return .rejected(reason: "cannot sign the APNs provider token")
            }
        }
        let request = APNsRequest(path: self.devicePathPrefix + token, headers: headers, body: ByteBuffer(bytes: body))

        let status: Int
        let reason: String?
        let retryAfter: Duration?
        let connection = self.connection()
        do {
            let answer = try await connection.execute(request, deadline: deadline.nioDeadline)
            status = answer.status
            reason = Self.reason(in: answer.body)
            retryAfter = RetryAfter.parse(answer.retryAfter)
        } catch APNsExchangeError.notProcessed(let why) where mayResend {
            // APNs never saw it (GOAWAY, a refused stream, a closing connection): once more, on a new stream.
            self.logger.debug("APNs request not processed; sending again", metadata: ["token": "\(Redaction.fingerprint(token))", "why": "\(why)"])
            return await self.send(notification, body: body, to: token, deadline: deadline, mayRenewToken: mayRenewToken, mayResend: false)
        } catch APNsExchangeError.deadlineExceeded {
            return .retryLater(after: nil, reason: "deadline passed")
        } catch {
            let fingerprint = Redaction.fingerprint(token)
            let description = String(describing: error).replacingOccurrences(of: token, with: fingerprint)
            self.logger.debug("APNs request failed", metadata: ["token": "\(fingerprint)", "error": "\(description)"])
            return .retryLater(after: nil, reason: "transport: \(description)")
        }
        self.logger.debug(
            "APNs answered",
            metadata: ["token": "\(Redaction.fingerprint(token))", "status": "\(status)", "reason": "\(reason ?? "-")"]
        )
        switch APNsResponseClassifier.classify(status: status, reason: reason, retryAfter: retryAfter) {
        case .outcome(let outcome):
            return outcome
        case .renewProviderTokenAndRetry:
            guard mayRenewToken, let providerToken = self.providerToken else {
                return .credentialsRefused(reason: reason ?? "ExpiredProviderToken")
            }
            providerToken.invalidate(bearer)
            return await self.send(notification, body: body, to: token, deadline: deadline, mayRenewToken: false, mayResend: mayResend)
        }
    }

    /// The connection a request goes over: the one pinned to the event loop the request runs on (a Matrix
    /// or gorush request's task runs on its HTTP connection's loop), so that no request crosses threads
    /// on its way to APNs and back (outbox lanes run on the loops too); round-robin for tasks on no loop.
    private func connection() -> APNsConnection {
        if let current = MultiThreadedEventLoopGroup.currentEventLoop,
            let local = self.connections.first(where: { $0.eventLoop === current })
        {
            return local
        }
        return self.connections[Int(self.nextConnection.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(self.connections.count))]
    }

    /// Whether `token` is non-empty ASCII letters and digits, so it cannot change the request path.
    private static func isSafePathSegment(_ token: String) -> Bool {
        var token = token
        // Over the contiguous bytes: walking `utf8` index by index cost some 40 instructions a byte.
        return token.withUTF8 { bytes in
            var safe = !bytes.isEmpty
            for byte in bytes {
                let letter = byte | 0x20
                safe = safe && ((0x30...0x39).contains(byte) || (0x61...0x7A).contains(letter))
            }
            return safe
        }
    }

    /// The `reason` member of an APNs error body.
    private static func reason(in body: ByteBuffer) -> String? {
        guard body.readableBytes > 0,
            let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        else { return nil }
        return object["reason"] as? String
    }
}
