import Crypto
public import Foundation
public import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import NIOSSL
import Synchronization

/// An APNs look-alike for tests, demos and `pushgate sandbox`: HTTP/2 over TLS (ALPN `h2`, or prior
/// knowledge when the client negotiates nothing, as APNs allows; HTTP/1.1 fails the HTTP/2 preface) on a
/// throw-away certificate authority, token authentication with a `.p8` key it issues (or client
/// certificates from ``SandboxCertificateAuthority/issueClientCertificate(userID:)``), and APNs'
/// checks and reasons for `POST /3/device/<token>`.
///
/// Every request is recorded in ``log``. Device tokens starting with `dead`, `bad0`, `4290`, `5000`,
/// `5030` or `e0e0` ask for failures (see ``APNsEmulatorRules``); the first request for an `e0e0` token
/// marks the provider token it came with as expired, so every later request with it gets
/// `ExpiredProviderToken` too, while a renewed provider token goes through.
///
/// ```swift
/// let emulator = try APNsEmulator(bundleID: "im.example.ios")
/// try await emulator.withRunningServer { port in
///     // configure base_url https://127.0.0.1:<port>, ca_file with emulator.certificateAuthority.caCertificatePEM
/// }
/// ```
public final class APNsEmulator: Sendable {
    /// The topic it accepts (`<bundleID>.voip` for VoIP).
    public let bundleID: String
    /// The issued key id (`key_id`).
    public let keyID: String
    /// The issued team id (`team_id`).
    public let teamID: String
    /// The issued `.p8` key, PKCS#8 PEM (`keyfile`).
    public let privateKeyPEM: String
    /// The CA clients must trust (`ca_file`) and the server certificate.
    public let certificateAuthority: SandboxCertificateAuthority
    /// What the emulator received.
    public let log: SandboxDeliveryLog

    private let verifier: APNsProviderTokenVerifier
    private let rules: APNsEmulatorRules
    /// Provider tokens the emulator expired, and the `e0e0` device tokens that already expired one.
    private struct Expiry {
        var providerTokens: Set<String> = []
        var deviceTokens: Set<String> = []
    }

    private let expiry = Mutex(Expiry())
    /// The distinct valid provider tokens requests carried (APNs refuses a key's token updated more than
    /// once in 20 minutes), kept as SHA-256 digests, with the emulator's time of the first request that
    /// carried each.
    private let providerTokensSeen = Mutex<[SHA256.Digest: Date]>([:])
    /// The emulator's clock: provider tokens' ages are measured on it.
    private let now: @Sendable () -> Date

    /// How many distinct valid provider tokens requests have carried.
    public var distinctProviderTokens: Int { self.providerTokensSeen.withLock { $0.count } }

    /// When each distinct valid provider token was first seen, in order (the emulator's clock).
    public var providerTokensFirstSeen: [Date] { self.providerTokensSeen.withLock { $0.values.sorted() } }

    /// Creates an emulator with a fresh key, ids and certificates.
    /// - Parameters:
    ///   - bundleID: the app's bundle id.
    ///   - log: where deliveries are recorded.
    ///   - now: the clock provider tokens' ages are measured on; tests simulate time with their own.
    public init(
        bundleID: String = "im.pushgate.sandbox", log: SandboxDeliveryLog = SandboxDeliveryLog(), now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        let key = P256.Signing.PrivateKey()
        self.now = now
        self.bundleID = bundleID
        self.keyID = Self.randomIdentifier()
        self.teamID = Self.randomIdentifier()
        self.privateKeyPEM = key.pemRepresentation
        self.certificateAuthority = try SandboxCertificateAuthority(commonName: "Pushgate APNs Sandbox CA")
        self.log = log
        self.verifier = APNsProviderTokenVerifier(publicKey: key.publicKey, keyID: self.keyID, teamID: self.teamID)
        self.rules = APNsEmulatorRules(bundleID: bundleID)
    }

    /// Ten characters from A-Z and 0-9, the shape of Apple's key and team ids.
    private static func randomIdentifier() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<10).map { _ in alphabet.randomElement()! })
    }

    /// The Hummingbird application serving the emulator over TLS with HTTP/2.
    ///
    /// Each connection is served by SwiftNIO handlers on its event loop (``APNsEmulatorServerChannel``):
    /// TLS, NIOHTTP2, and a handler that answers every stream as its request ends, without a channel or a
    /// task per stream. Hummingbird binds, reports the port and shuts down gracefully; its router is not used.
    /// - Parameters:
    ///   - host: the address to bind, `127.0.0.1` by default.
    ///   - port: the port; 0 picks a free one, reported to `onServerRunning`.
    ///   - logger: Hummingbird's logger.
    ///   - onServerRunning: called with the bound port once the server listens.
    public func makeApplication(
        host: String = "127.0.0.1",
        port: Int = 0,
        logger: Logger = Logger(label: "pushgate.sandbox.apns"),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        // Like APNs, speak HTTP/2 on every TLS connection: ALPN offers only `h2`, and clients that
        // negotiate nothing (aioapns) get HTTP/2 by prior knowledge rather than an HTTP/1.1 fallback.
        var tls = try self.certificateAuthority.makeServerTLSConfiguration()
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        return Application(
            router: Router(),
            server: HTTPServerBuilder { _ in APNsEmulatorServerChannel(emulator: self, sslContext: sslContext) },
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    /// Runs the emulator on `127.0.0.1` with a free port while `body` runs, then stops it.
    /// - Parameter body: receives the bound port.
    public func withRunningServer<Result: Sendable>(
        logger: Logger = Logger(label: "pushgate.sandbox.apns"),
        _ body: @Sendable (Int) async throws -> Result
    ) async throws -> Result {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = try self.makeApplication(logger: logger) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                group.cancelAll()
                throw CancellationError()
            }
            do {
                let result = try await body(port)
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }

    /// Judges one `POST /3/device/<token>` request (an HTTP/2 stream) and records it in ``log``.
    /// - Parameters:
    ///   - token: the device token from the path.
    ///   - headers: the `apns-*` headers by lower-case name.
    ///   - authorization: the `authorization` header, if any.
    ///   - body: the request body.
    ///   - clientCertificateUserID: the UID of the connection's client certificate, if it presented one;
    ///     asked only for a request without `authorization`.
    func judge(
        token: String, headers: [String: String], authorization: String?, body: [UInt8],
        clientCertificateUserID: () -> String?
    ) -> APNsEmulatorRules.Verdict {
        let verdict: APNsEmulatorRules.Verdict
        var authentication = "token"
        if authorization == nil, let userID = clientCertificateUserID() {
            // Certificate authentication: the certificate is for one bundle id.
            authentication = "certificate"
            verdict = userID == self.bundleID
                ? self.rules.verdict(for: .init(token: token, headers: headers, body: body))
                : .init(status: 400, reason: "TopicDisallowed")
        } else if let problem = self.providerTokenProblem(authorization, token: token) {
            verdict = .init(status: 403, reason: problem)
        } else {
            verdict = self.rules.verdict(for: .init(token: token, headers: headers, body: body))
        }

        // The headers and the body as the log shows them are made when it is read.
        self.log.record(
            SandboxDelivery(provider: "apns", token: token, status: verdict.status, reason: verdict.reason, headers: [:], body: "")
        ) { [authentication] delivery in
            var recorded = headers
            recorded["http-version"] = "2"
            recorded["authentication"] = authentication
            delivery.headers = recorded
            delivery.body = String(decoding: body, as: UTF8.self)
        }
        return verdict
    }

    /// Verifies the provider token. The first request for an `e0e0` device token expires the provider
    /// token it carries, as if it had grown too old: that request and every later one with the same
    /// provider token get `ExpiredProviderToken`.
    private func providerTokenProblem(_ authorization: String?, token: String) -> String? {
        let now = self.now()
        if let problem = self.verifier.problem(with: authorization, now: now) { return problem }
        let jwt = authorization ?? ""
        self.providerTokensSeen.withLock { seen in
            let digest = SHA256.hash(data: Data(jwt.utf8))
            if seen[digest] == nil { seen[digest] = now }
        }
        return self.expiry.withLock { expiry in
            if expiry.providerTokens.contains(jwt) { return "ExpiredProviderToken" }
            if APNsEmulatorRules.asksForExpiredProviderToken(token), expiry.deviceTokens.insert(token.lowercased()).inserted {
                expiry.providerTokens.insert(jwt)
                return "ExpiredProviderToken"
            }
            return nil
        }
    }
}
