public import Foundation
import PushgateCore
import PushgateProviderSupport
import Synchronization
import _CryptoExtras

/// An emulator of Firebase Cloud Messaging's HTTP v1 API and of Google's OAuth 2.0 token endpoint.
///
/// It issues a service account (an RSA-2048 key, one for every emulator in the process), accepts JWT-bearer
/// grants signed with that key, and accepts `messages:send` requests that carry an access token it issued.
/// Registration tokens choose the answer: a token starting with `unregistered` gets 404 `UNREGISTERED`,
/// `badtoken` 400 `INVALID_ARGUMENT`, `mismatch` 403 `SENDER_ID_MISMATCH`,
/// `quota` 429 `QUOTA_EXCEEDED` with `Retry-After: 7`, `unavailable` 503, `internal` 500, `thirdparty`
/// 401 `THIRD_PARTY_AUTH_ERROR` (the project's APNs credentials refused), `slow` an answer
/// after ``slowDelay``; any other token is delivered. A `data` key FCM reserves (`from`, `message_type`,
/// `google…`, `gcm…`) gets 400 `INVALID_ARGUMENT`. Every send is recorded in ``log``.
///
/// Serve it with ``addRoutes(to:)`` (or ``buildRouter()``) on a Hummingbird application.
public final class FCMEmulator: Sendable {
    /// The project messages must be sent to.
    public let projectID: String
    /// The service account's e-mail address.
    public let clientEmail: String
    /// The service account's key id.
    public let privateKeyID: String
    /// Where deliveries are recorded.
    public let log: SandboxDeliveryLog
    /// How long a `slow…` token waits before it is answered.
    public let slowDelay: Duration
    /// How long issued access tokens live, in seconds.
    public let accessTokenLifetime: Int

    /// The emulator's wall clock (injectable so tests can move time).
    public let now: @Sendable () -> Date

    private let key: _RSA.Signing.PrivateKey
    /// The service-account key of every emulator in the process, made when the first emulator is.
    ///
    /// Generating an RSA-2048 key is an emulator's costliest step by far (tenths of a second to seconds of
    /// CPU in a debug build: a random prime search), and it runs on whichever thread creates the emulator.
    /// In tests that is Swift's pool, which never preempts a job, so every key made there stalled the
    /// servers and timers of the tests running alongside. No emulator needs a key of its own: grants signed
    /// with any other key are still refused, key ids and access tokens stay per emulator, and no test runs
    /// two emulators against each other. A failed generation is kept too, and thrown by every initialiser.
    private static let processKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
    private let state = Mutex(FCMEmulatorState())
    /// The JSON of a send's answer up to the message serial: `{"name":"projects/<project>/messages/`.
    private let sentNamePrefix: String

    /// Creates an emulator whose service account has the process's emulator key and a new key id.
    /// - Parameters:
    ///   - log: where deliveries are recorded.
    ///   - projectID: the Firebase project id.
    ///   - slowDelay: the delay for `slow…` tokens.
    ///   - now: the wall clock assertions and access tokens are checked against.
    /// - Throws: when the process's emulator key could not be generated.
    public init(
        log: SandboxDeliveryLog = SandboxDeliveryLog(), projectID: String = "pushgate-sandbox", slowDelay: Duration = .seconds(10),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.now = now
        self.log = log
        self.projectID = projectID
        self.clientEmail = "pushgate-sandbox@\(projectID).iam.gserviceaccount.com"
        self.privateKeyID = Self.randomHex(20)
        self.slowDelay = slowDelay
        self.accessTokenLifetime = 3599
        self.key = try Self.processKey.get()
        self.sentNamePrefix = String(Self.json(["name": "projects/\(projectID)/messages/"]).dropLast(2))
    }

    // MARK: Service account

    /// The service-account JSON whose `token_uri` is `<baseURL>/token`.
    /// - Parameter baseURL: how clients reach this emulator, such as `http://127.0.0.1:8443`.
    public func serviceAccountJSON(baseURL: String) -> String {
        let tokenURI = Self.trimmed(baseURL) + "/token"
        self.state.withLock { _ = $0.tokenURIs.insert(tokenURI) }
        let object: [String: String] = [
            "type": "service_account",
            "project_id": self.projectID,
            "private_key_id": self.privateKeyID,
            "private_key": self.key.pkcs8PEMRepresentation + "\n",
            "client_email": self.clientEmail,
            "client_id": "100000000000000000000",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes ``serviceAccountJSON(baseURL:)`` to `path`, readable by its owner only.
    public func writeServiceAccount(baseURL: String, to path: String) throws {
        try Data(self.serviceAccountJSON(baseURL: baseURL).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    // MARK: Counters

    /// How many `POST /token` requests arrived.
    public var tokenRequestCount: Int { self.state.withLock { $0.tokenRequests } }
    /// How many access tokens were issued.
    public var issuedTokenCount: Int { self.state.withLock { $0.tokensIssued } }
    /// How many `messages:send` requests arrived.
    public var sendRequestCount: Int { self.state.withLock { $0.sendRequests } }

    /// Whether `accessToken` was issued here and has not expired or been revoked.
    public func isValidAccessToken(_ accessToken: String, now: Date? = nil) -> Bool {
        let now = now ?? self.now()
        return self.state.withLock { state in !state.refusesAllAccessTokens && (state.accessTokens[accessToken].map { $0 > now } ?? false) }
    }

    /// Whether every access token is refused (to exercise a gateway whose refreshed token is refused too).
    public var refusesAllAccessTokens: Bool {
        get { self.state.withLock { $0.refusesAllAccessTokens } }
        set { self.state.withLock { $0.refusesAllAccessTokens = newValue } }
    }

    /// Revokes every issued access token, so the next send is answered 401 `UNAUTHENTICATED`.
    public func revokeAccessTokens() {
        self.state.withLock { $0.accessTokens.removeAll() }
    }

    // MARK: Token endpoint

    /// Answers `POST /token`: a JWT-bearer grant with an assertion signed by the issued key.
    /// - Parameters:
    ///   - form: the form-encoded body.
    ///   - host: the request's `Host`, to accept the emulator's own token URL as audience.
    public func tokenReply(form: String, host: String?, now: Date? = nil) -> FCMEmulatorReply {
        let now = now ?? self.now()
        let fields = Self.decodeForm(form)
        let audiences = self.state.withLock { state in
            state.tokenRequests += 1
            var audiences = state.tokenURIs
            if let host { audiences.formUnion(["http://\(host)/token", "https://\(host)/token"]) }
            return audiences
        }
        guard fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return Self.grantError("unsupported_grant_type", "Invalid grant_type: \(fields["grant_type"] ?? "")", status: 400)
        }
        guard let assertion = fields["assertion"], !assertion.isEmpty else {
            return Self.grantError("invalid_request", "Missing required parameter: assertion", status: 400)
        }
        let verifier = FCMAssertionVerifier(publicKey: self.key.publicKey, clientEmail: self.clientEmail)
        do {
            try verifier.verify(assertion, audiences: audiences, now: now)
        } catch {
            return Self.grantError("invalid_grant", error.description, status: 400)
        }
        let accessToken = "ya29.sandbox." + Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        let lifetime = self.accessTokenLifetime
        self.state.withLock { state in
            state.tokensIssued += 1
            state.accessTokens[accessToken] = now.addingTimeInterval(TimeInterval(lifetime))
        }
        return FCMEmulatorReply(status: 200, body: Self.json(["access_token": accessToken, "expires_in": lifetime, "token_type": "Bearer"]))
    }

    // MARK: Send endpoint

    /// Answers `POST /v1/projects/{project}/messages:send` and records it.
    /// - Parameters:
    ///   - project: the path's project id.
    ///   - authorization: the `Authorization` header.
    ///   - headers: other request headers to record (lower-case names).
    ///   - body: the request body.
    public func sendReply(project: String, authorization: String?, headers: [String: String] = [:], body: Data, now: Date? = nil) -> FCMEmulatorReply {
        self.sendReply(project: project, authorization: authorization, headers: headers, body: body, object: Self.jsonObject(body), now: now)
    }

    /// ``sendReply(project:authorization:headers:body:now:)`` for a body the caller already parsed
    /// (`object`: the body as a JSON object, nil when it is not one).
    func sendReply(project: String, authorization: String?, headers: [String: String], body: Data, object: [String: JSONValue]?, now: Date?) -> FCMEmulatorReply {
        let now = now ?? self.now()
        let serial = self.state.withLock { state in
            state.sendRequests += 1
            state.messageSerial += 1
            return state.messageSerial
        }
        let message = Self.messageObject(object)
        let token = Self.token(of: message)
        var recorded = headers
        recorded["authorization"] = authorization.map { _ in "Bearer (redacted)" }

        let result = self.classify(project: project, authorization: authorization, message: message, token: token, serial: serial, now: now)
        // The recorded body (the message with sorted keys) is only made when the log is read.
        self.log.record(
            SandboxDelivery(provider: "fcm", token: token, status: result.reply.status, reason: result.reason, headers: recorded, body: "", receivedAt: now),
            body: { Self.messageText(body) }
        )
        return result.reply
    }

    /// The body as a JSON object, or nil.
    static func jsonObject(_ body: Data) -> [String: JSONValue]? {
        guard case .object(let object)? = try? JSONParser.parse(Array(body)) else { return nil }
        return object
    }

    /// The body's `message` member when it is an object.
    static func messageObject(_ object: [String: JSONValue]?) -> [String: JSONValue]? {
        guard case .object(let message)? = object?["message"] else { return nil }
        return message
    }

    /// The message's recipient: its `token` when it is a string, else `/topics/<topic>` or
    /// `condition:<condition>` for a topic or condition send, else empty.
    static func token(of message: [String: JSONValue]?) -> String {
        if case .string(let token)? = message?["token"] { return token }
        if case .string(let topic)? = message?["topic"], !topic.isEmpty { return "/topics/" + topic }
        if case .string(let condition)? = message?["condition"], !condition.isEmpty { return "condition:" + condition }
        return ""
    }

    /// What the log shows of a send: its `message` with sorted keys, else the body as it came.
    static func messageText(_ body: Data) -> String {
        let message = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["message"] as? [String: Any]
        return message.flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .withoutEscapingSlashes]) }
            .map { String(decoding: $0, as: UTF8.self) } ?? String(decoding: body, as: UTF8.self)
    }

    /// Whether FCM refuses `key` in a message's `data`: `from`, `message_type`, or a key starting with
    /// `google` or `gcm`.
    static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm")
    }

    /// Whether `token` asks for a delayed answer.
    public func isSlow(_ token: String) -> Bool { token.hasPrefix("slow") }

    private func classify(
        project: String, authorization: String?, message: [String: JSONValue]?, token: String, serial: Int, now: Date
    ) -> (reply: FCMEmulatorReply, reason: String?) {
        let bearer = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let bearer, self.isValidAccessToken(bearer, now: now) else {
            return Self.failure(401, "UNAUTHENTICATED", nil, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
        }
        guard project == self.projectID else {
            return Self.failure(403, "PERMISSION_DENIED", nil, "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).")
        }
        guard let message else {
            return Self.failure(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid JSON payload received. The body must be an object with a message.")
        }
        guard !token.isEmpty else {
            return Self.failure(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Recipient of the message is not set.", field: "message.token")
        }
        if let data = message["data"] {
            guard case .object(let members) = data else {
                return Self.failure(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid value at 'message.data' (type.googleapis.com/google.firebase.fcm.v1.Message.DataEntry), not an object.", field: "message.data")
            }
            for (index, key) in members.keys.sorted().enumerated() {
                if case .string = members[key] { continue }
                return Self.failure(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid value at 'message.data[\(index)].value' (TYPE_STRING), data values must be strings.", field: "message.data[\(index)].value")
            }
            // FCM reserves `from`, `message_type` and keys starting with `google` or `gcm`.
            if let key = members.keys.sorted().first(where: Self.isReservedDataKey) {
                return Self.failure(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid data payload key: \(key)", field: "message.data")
            }
        }
        if token.hasPrefix("unregistered") {
            return Self.failure(404, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found.")
        } else if token.hasPrefix("badtoken") {
            return Self.failure(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", field: "message.token")
        } else if token.hasPrefix("mismatch") {
            return Self.failure(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH", "SenderId mismatch")
        } else if token.hasPrefix("quota") {
            return Self.failure(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded for quota metric 'Send requests'.", retryAfter: "7")
        } else if token.hasPrefix("unavailable") {
            return Self.failure(503, "UNAVAILABLE", "UNAVAILABLE", "The service is currently unavailable.")
        } else if token.hasPrefix("internal") {
            return Self.failure(500, "INTERNAL", "INTERNAL", "Internal error encountered.")
        } else if token.hasPrefix("thirdparty") {
            return Self.failure(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR", "Auth error from APNS or Web Push Service")
        }
        // `{"name":"projects/<project>/messages/<serial>"}`: the serial is digits, so it is spliced into
        // the JSON made once for the name's prefix.
        return (FCMEmulatorReply(status: 200, body: self.sentNamePrefix + "\(serial)\"}"), nil)
    }

    // MARK: Helpers

    private static func failure(
        _ code: Int, _ status: String, _ errorCode: String?, _ message: String, field: String? = nil, retryAfter: String? = nil
    ) -> (reply: FCMEmulatorReply, reason: String?) {
        let violations = field.map { [FCMErrorBody.FieldViolation(field: $0, description: message)] } ?? []
        let body = FCMErrorBody(code: code, status: status, message: message, errorCode: errorCode, fieldViolations: violations)
        return (FCMEmulatorReply(error: body, retryAfter: retryAfter), errorCode ?? status)
    }

    private static func grantError(_ error: String, _ description: String, status: Int) -> FCMEmulatorReply {
        FCMEmulatorReply(status: status, body: Self.json(["error": error, "error_description": description]))
    }

    private static func json(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeForm(_ form: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text) }
            guard let name = parts.first else { continue }
            fields[decode(name)] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    private static func trimmed(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    private static func randomHex(_ count: Int) -> String {
        (0..<count).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}
