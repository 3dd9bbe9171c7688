public import Foundation
public import Hummingbird
import NIOCore
public import Logging
import PushgateCore
import Synchronization

/// A Huawei Push Kit emulator: the OAuth token endpoint (client-credentials grant) and
/// `POST /v1/{app id}/messages:send`, with the checks the push server makes and tokens that ask for each
/// failure:
///
/// | token prefix | answer |
/// |---|---|
/// | `invalid` | 400 `80300007` (all tokens invalid) |
/// | `busy` | 429 with `Retry-After: 3` |
/// | `internal` | 500 `81000001` |
///
/// Every send is recorded in the ``SandboxDeliveryLog`` as provider `hms`.
public final class HMSEmulator: Sendable {
    /// The Huawei app id the emulator serves (the OAuth client id).
    public let appID: String
    /// The app secret it accepts.
    public let appSecret: String
    private let log: SandboxDeliveryLog
    private let issued = Mutex<[String: Date]>([:])
    /// How long issued access tokens live.
    public let tokenLifetime: TimeInterval

    /// Creates an emulator with fresh credentials.
    /// - Parameter appSecret: the secret to accept; nil makes a random one.
    public init(appID: String = "100000001", appSecret: String? = nil, log: SandboxDeliveryLog, tokenLifetime: TimeInterval = 3600) {
        self.appID = appID
        self.appSecret = appSecret ?? Hex.lowercase(Data((0..<16).map { _ in UInt8.random(in: 0...255) }))
        self.log = log
        self.tokenLifetime = tokenLifetime
    }

    /// Forgets every issued access token, as if they had expired (for tests of the renewal).
    public func revokeAccessTokens() {
        self.issued.withLock { $0 = [:] }
    }

    /// Adds `POST /oauth2/v3/token` and `POST /v1/:app/messages:send` to `router`.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.post("/oauth2/v3/token") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 16)
            return Self.response(self.tokenReply(form: String(buffer: body)))
        }
        router.post("/v1/:app/messages:send") { request, context -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let reply = self.sendReply(
                app: context.parameters.get("app") ?? "", authorization: request.headers[.authorization],
                contentType: request.headers[.contentType], body: Array(body.readableBytesView)
            )
            return Self.response(reply)
        }
    }

    /// A status, a JSON body and an optional `Retry-After`.
    struct Reply {
        var status: Int
        var body: String
        var retryAfter: String?
    }

    func tokenReply(form: String) -> Reply {
        var fields: [String: String] = [:]
        for pair in form.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? String($0) }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard fields["grant_type"] == "client_credentials" else {
            return Reply(status: 400, body: #"{"error":1102,"error_description":"unsupported grant_type"}"#)
        }
        guard fields["client_id"] == self.appID, fields["client_secret"] == self.appSecret else {
            return Reply(status: 400, body: #"{"error":1101,"error_description":"invalid client credentials"}"#)
        }
        let token = Hex.lowercase(Data((0..<24).map { _ in UInt8.random(in: 0...255) }))
        self.issued.withLock { $0[token] = Date().addingTimeInterval(self.tokenLifetime) }
        return Reply(status: 200, body: #"{"access_token":"\#(token)","expires_in":\#(Int(self.tokenLifetime)),"token_type":"Bearer"}"#)
    }

    func sendReply(app: String, authorization: String?, contentType: String?, body: [UInt8]) -> Reply {
        let object = try? JSONParser.parse(body)
        let message: [String: JSONValue]? = if case .object(let members)? = object?["message"] { members } else { nil }
        let recipient = Self.recipient(message)
        let (reply, code) = self.judge(app: app, authorization: authorization, object: object, message: message, size: body.count, recipient: recipient)
        let shown: String = if let message, let text = try? JSONValue.object(message).encoded() { String(decoding: text, as: UTF8.self) } else { String(decoding: body, as: UTF8.self) }
        self.log.record(
            SandboxDelivery(
                provider: "hms", token: recipient, status: reply.status, reason: code == HMS.success ? nil : code,
                headers: ["content-type": contentType ?? ""], body: shown
            )
        )
        return reply
    }

    private enum HMS {
        static let success = "80000000"
    }

    private func judge(
        app: String, authorization: String?, object: JSONValue?, message: [String: JSONValue]?, size: Int, recipient: String
    ) -> (Reply, String) {
        func failure(_ status: Int, _ code: String, _ text: String) -> (Reply, String) {
            (Reply(status: status, body: #"{"code":"\#(code)","msg":"\#(text)","requestId":"\#(UUID().uuidString.lowercased())"}"#), code)
        }
        let bearer = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil } ?? ""
        let valid = self.issued.withLock { issued in issued[bearer].map { $0 > Date() } ?? false }
        guard valid, app == self.appID else { return failure(401, "80200001", "Oauth authentication error") }
        guard size <= 4096 else { return failure(400, "80300008", "The message body size exceeds the default value") }
        guard case .object? = object, let message else { return failure(400, "80100003", "Incorrect message structure") }
        if let data = message["data"], data.stringValue == nil { return failure(400, "80100001", "Some request parameters are incorrect: data must be a string") }
        var targets = 0
        if case .array(let tokens)? = message["token"] {
            guard (1...1000).contains(tokens.count), tokens.allSatisfy({ ($0.stringValue ?? "").isEmpty == false }) else {
                return failure(400, "80300010", "The number of tokens in the message body exceeds the default value")
            }
            targets += 1
        } else if message["token"] != nil {
            return failure(400, "80100003", "Incorrect message structure: token must be an array")
        }
        for key in ["topic", "condition"] where message[key]?.stringValue?.isEmpty == false { targets += 1 }
        guard targets == 1 else { return failure(400, "80100001", "Some request parameters are incorrect: exactly one of token, topic and condition") }
        if case .object(let android)? = message["android"] {
            if let urgency = android["urgency"], urgency != "HIGH", urgency != "NORMAL" {
                return failure(400, "80100001", "Some request parameters are incorrect: android.urgency")
            }
            if case .object(let notification)? = android["notification"] {
                guard case .object(let action)? = notification["click_action"], case .number(let type)? = action["type"], (1...4).contains(type) else {
                    return failure(400, "80100001", "Some request parameters are incorrect: android.notification.click_action is mandatory")
                }
            }
        }
        if recipient.hasPrefix("invalid") { return failure(400, "80300007", "All the tokens are invalid") }
        if recipient.hasPrefix("busy") {
            return (Reply(status: 429, body: #"{"code":"80300013","msg":"Too many requests"}"#, retryAfter: "3"), "429")
        }
        if recipient.hasPrefix("internal") { return failure(500, "81000001", "System internal error") }
        return (Reply(status: 200, body: #"{"code":"80000000","msg":"Success","requestId":"\#(UUID().uuidString.lowercased())"}"#), HMS.success)
    }

    /// The first token, or `/topics/<topic>`, or `condition:<condition>`.
    static func recipient(_ message: [String: JSONValue]?) -> String {
        if case .array(let tokens)? = message?["token"], let first = tokens.first?.stringValue { return first }
        if let topic = message?["topic"]?.stringValue, !topic.isEmpty { return "/topics/" + topic }
        if let condition = message?["condition"]?.stringValue, !condition.isEmpty { return "condition:" + condition }
        return ""
    }

    private static func response(_ reply: Reply) -> Response {
        var headers: HTTPFields = [.contentType: "application/json;charset=utf-8"]
        if let retryAfter = reply.retryAfter { headers[.retryAfter] = retryAfter }
        return Response(status: HTTPResponse.Status(code: reply.status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: reply.body)))
    }

    /// The emulator as an HTTP application on `host:port`.
    public func makeApplication(host: String, port: Int, logger: Logger) -> some ApplicationProtocol {
        let router = Router()
        self.addRoutes(to: router)
        return Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: "pushgate-sandbox-hms"), logger: logger)
    }
}
