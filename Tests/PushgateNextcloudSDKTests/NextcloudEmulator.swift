import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import Logging
import PushgateTestSupport
import Synchronization

/// A Nextcloud server's push registration endpoint (OCS) and a push proxy's `/devices`, on one local
/// Hummingbird server, for exercising ``NextcloudPushRegistrar`` over real HTTP.
///
/// The OCS side checks what the real server checks (basic auth, `OCS-APIRequest`, the form fields and
/// their rules) and answers as it does; the proxy side records every request byte for byte.
final class NextcloudEmulator: Sendable {
    /// One request as it arrived.
    struct Received: Sendable {
        var method: String
        var path: String
        var query: String
        var headers: [String: String]
        var body: String
        /// The decoded form body (`nil` if it did not decode).
        var fields: [String: String]?
    }

    /// What the emulator has been told and what it saw.
    struct State: Sendable {
        /// Status the proxy answers with.
        var proxyStatus = 200
        /// A 400 OCS message to answer every registration with, as if the server had refused the input.
        var forcedRefusal: String?
        /// The registration stored for the app password: (pushTokenHash, devicePublicKey, proxyServer).
        var registered: [String]?
        var requests: [Received] = []
    }

    static let basePath = "/nextcloud"
    static let pushPath = basePath + "/ocs/v2.php/apps/notifications/api/v2/push"

    let login: String
    let appPassword: String
    /// The user key pair, as the server's identity proof makes it.
    let userKey: _RSA.Signing.PrivateKey
    /// The user public key as the server sends it: SPKI PEM with a trailing newline.
    let userPublicKeyPEM: String
    /// `base64(sha512(rawIdentifier))`, chosen to contain `+` and `/`.
    let deviceIdentifier: String
    /// `base64(sign(rawIdentifier))`, also containing `+` and `/`.
    let deviceIdentifierSignature: String
    private let state: Mutex<State>

    /// The user key is generated with ``OffPool``, away from the pool that runs the other tests' servers.
    init(login: String = "alice", appPassword: String = "Xq8pL-2mWzR-vT7nK-bY4cJ-hG9dF") async throws {
        self.login = login
        self.appPassword = appPassword
        self.userKey = try await OffPool.run { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
        self.userPublicKeyPEM = self.userKey.publicKey.pemRepresentation + "\n"
        // PHP: json_encode([$cloudId, $tokenId]); the token id is picked so that both base64 texts hold `+` and `/`.
        var tokenID = 4242
        while true {
            let raw = Data(#"["\#(login)@cloud.example.com",\#(tokenID)]"#.utf8)
            let identifier = Data(SHA512.hash(data: raw)).base64EncodedString()
            let signature = try self.userKey.signature(for: SHA512.hash(data: raw), padding: .insecurePKCS1v1_5).rawRepresentation
                .base64EncodedString()
            if identifier.contains("+"), identifier.contains("/"), signature.contains("+"), signature.contains("/") {
                self.deviceIdentifier = identifier
                self.deviceIdentifierSignature = signature
                break
            }
            tokenID += 1
        }
        self.state = Mutex(State())
    }

    /// Changes the emulator's settings.
    func configure(_ change: @Sendable (inout State) -> Void) {
        self.state.withLock { change(&$0) }
    }

    /// Every request received so far.
    var requests: [Received] { self.state.withLock { $0.requests } }

    /// The requests to `path` with `method`.
    func requests(_ method: String, _ path: String) -> [Received] {
        self.requests.filter { $0.method == method && $0.path == path }
    }

    /// Runs the server on a free loopback port while `body` runs with that port, and stops it gracefully.
    func serve<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        let port = PortBox()
        let router = Router()
        self.addRoutes(to: router)
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.set(channel.localAddress?.port ?? 0) },
            logger: {
                var logger = Logger(label: "nextcloud-emulator")
                logger.logLevel = .critical
                return logger
            }()
        )
        return try await RunningServices.with([application]) {
            var waited = 0
            while port.value == 0 {
                try await Task.sleep(for: .milliseconds(20))
                waited += 1
                if waited > 500 { throw EmulatorFailure(description: "the emulator did not start") }
            }
            return try await body(port.value)
        }
    }

    private func addRoutes(to router: Router<BasicRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.pushPath)) { request, _ in
            let received = try await self.record(request)
            return self.registerDevice(received)
        }
        router.delete(RouterPath(stringLiteral: Self.pushPath)) { request, _ in
            let received = try await self.record(request)
            return self.removeDevice(received)
        }
        router.post("/devices") { request, _ in
            _ = try await self.record(request)
            return Response(status: .init(code: self.state.withLock { $0.proxyStatus }))
        }
        router.delete("/devices") { request, _ in
            _ = try await self.record(request)
            return Response(status: .init(code: self.state.withLock { $0.proxyStatus }))
        }
    }

    private func record(_ request: Request) async throws -> Received {
        let buffer = try await request.body.collect(upTo: 1 << 20)
        let body = String(buffer: buffer)
        var headers: [String: String] = [:]
        for field in request.headers {
            headers[field.name.canonicalName] = field.value
        }
        let received = Received(
            method: request.method.rawValue, path: request.uri.path, query: request.uri.query ?? "", headers: headers, body: body,
            fields: FormFields.decode(body)
        )
        self.state.withLock { $0.requests.append(received) }
        return received
    }

    /// Basic auth with the app password, and the OCS request marker.
    private func authenticationProblem(_ received: Received) -> Response? {
        let expected = "Basic " + Data("\(self.login):\(self.appPassword)".utf8).base64EncodedString()
        guard received.headers["authorization"] == expected else {
            return Self.ocs(status: 401, meta: "Current user is not logged in", data: [:])
        }
        guard received.headers["ocs-apirequest"] == "true" else {
            return Self.ocs(status: 400, meta: "CSRF check failed", data: ["message": "MISSING_OCS_APIREQUEST"])
        }
        guard received.query == "format=json", received.headers["accept"]?.contains("application/json") == true else {
            return Self.ocs(status: 400, meta: "wants JSON", data: ["message": "NOT_JSON"])
        }
        return nil
    }

    /// `PushController::registerDevice`.
    private func registerDevice(_ received: Received) -> Response {
        if let problem = self.authenticationProblem(received) { return problem }
        if let refusal = self.state.withLock({ $0.forcedRefusal }) {
            return Self.ocs(status: 400, meta: "", data: ["message": refusal])
        }
        guard received.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") == true, let fields = received.fields else {
            return Self.ocs(status: 400, meta: "", data: ["message": "NOT_A_FORM"])
        }
        let hash = fields["pushTokenHash"] ?? ""
        let key = fields["devicePublicKey"] ?? ""
        let proxy = fields["proxyServer"] ?? ""
        guard ServerKeyRules.acceptsPushTokenHash(hash) else {
            return Self.ocs(status: 400, meta: "", data: ["message": "INVALID_PUSHTOKEN_HASH"])
        }
        guard ServerKeyRules.acceptsDeviceKey(key), (try? _RSA.Signing.PublicKey(pemRepresentation: key)) != nil else {
            return Self.ocs(status: 400, meta: "", data: ["message": "INVALID_DEVICE_KEY"])
        }
        guard ServerKeyRules.acceptsProxyServer(proxy) else {
            return Self.ocs(status: 400, meta: "", data: ["message": "INVALID_PROXY_SERVER"])
        }
        let changed = self.state.withLock { state in
            defer { state.registered = [hash, key, proxy] }
            return state.registered != [hash, key, proxy]
        }
        return Self.ocs(
            status: changed ? 201 : 200, meta: "OK",
            data: ["publicKey": self.userPublicKeyPEM, "deviceIdentifier": self.deviceIdentifier, "signature": self.deviceIdentifierSignature]
        )
    }

    /// `PushController::removeDevice`.
    private func removeDevice(_ received: Received) -> Response {
        if let problem = self.authenticationProblem(received) { return problem }
        let existed = self.state.withLock { state in
            defer { state.registered = nil }
            return state.registered != nil
        }
        return Self.ocs(status: existed ? 202 : 200, meta: "OK", data: [:])
    }

    /// An OCS v2 JSON answer; JSONSerialization escapes `/` as PHP's json_encode does.
    private static func ocs(status: Int, meta: String, data: [String: String]) -> Response {
        let envelope: [String: Any] = [
            "ocs": [
                "meta": ["status": status < 300 ? "ok" : "failure", "statuscode": status, "message": meta],
                "data": data.isEmpty ? [Any]() : data,
            ] as [String: Any]
        ]
        let json = (try? JSONSerialization.data(withJSONObject: envelope)) ?? Data()
        return Response(
            status: .init(code: status), headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: json))
        )
    }
}

/// The port the server bound, handed from its start-up callback to the test.
private final class PortBox: Sendable {
    private let port = Mutex(0)
    var value: Int { self.port.withLock { $0 } }
    func set(_ value: Int) { self.port.withLock { $0 = value } }
}

/// The emulator could not run.
struct EmulatorFailure: Error, CustomStringConvertible {
    let description: String
}
