import Foundation
import HTTPTypes
public import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import PushgateProviderSupport

/// A Web Push service on loopback: it accepts messages for the subscriptions it issued, checks what a
/// push service checks (endpoint, size, `Content-Encoding`, `TTL`, `Urgency` and `Topic` values, VAPID
/// signature, audience, expiry and contact), and records what the browser would receive with the `TTL`,
/// `Urgency` and `Topic` it was sent with.
///
/// Like a real push service it answers without decrypting: the `aes128gcm` body is decrypted with the
/// subscription's keys, as the browser would, when the log is read; a body the browser could not decrypt
/// is listed with the reason (`the browser could not decrypt: …`) and an empty body.
///
/// Special endpoint ids make each failure: `gone` → 410, `missing` → 404, `throttled` → 429 with
/// `Retry-After: 7`, `failing` → 500; bodies over 4096 bytes → 413; unknown ids → 404.
public struct WebPushEmulator: Sendable {
    /// The subscriptions it knows.
    public let issuer: WebPushSubscriptionIssuer
    /// Where deliveries are recorded.
    public let log: SandboxDeliveryLog

    /// Creates an emulator.
    public init(issuer: WebPushSubscriptionIssuer = WebPushSubscriptionIssuer(), log: SandboxDeliveryLog) {
        self.issuer = issuer
        self.log = log
    }

    /// Adds `POST /push/:id` to `router`.
    /// - Parameter origin: the scheme, host and port requests arrive at (the VAPID audience).
    public func addRoutes<Context: RequestContext>(to router: Router<Context>, origin: @escaping @Sendable () -> String) {
        router.post("/push/:id") { request, context -> Response in
            let id = context.parameters.get("id") ?? ""
            let body = try await request.body.collect(upTo: 1 << 20)
            return self.receive(id: id, body: Array(buffer: body), headers: request.headers, origin: origin())
        }
    }

    /// A Hummingbird application serving the emulator on SwiftNIO handlers (``SandboxHTTP1ServerChannel``):
    /// NIO's HTTP/1 server pipeline and a handler that answers each request as it ends, without a task per
    /// request. Hummingbird binds, reports the port and shuts down gracefully; its router is not used.
    /// - Parameters:
    ///   - host: the address to bind.
    ///   - port: the port; 0 picks a free one, reported to `onServerRunning`.
    ///   - origin: the scheme, host and port requests arrive at (the VAPID audience).
    ///   - deliveries: when given, `GET /sandbox/deliveries` answers its JSON.
    public func makeApplication(
        host: String = "127.0.0.1", port: Int = 0, origin: String, deliveries: (@Sendable () -> [UInt8])? = nil,
        logger: Logger = Logger(label: "pushgate.sandbox.webpush"),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: Router(),
            server: HTTPServerBuilder { _ in
                SandboxHTTP1ServerChannel(sslContext: nil) { WebPushEmulatorConnectionHandler(emulator: self, origin: origin, deliveries: deliveries) }
            },
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }

    func receive(id: String, body: [UInt8], headers: HTTPFields, origin: String) -> Response {
        let answer = self.judge(id: id, body: body, header: { name in HTTPField.Name(name).flatMap { headers[$0] } }, origin: origin)
        var extra: HTTPFields = [:]
        if let retryAfter = answer.retryAfter { extra[.retryAfter] = retryAfter }
        if let location = answer.location { extra[.location] = location }
        return Response(status: HTTPResponse.Status(code: answer.status), headers: extra, body: .init(byteBuffer: ByteBuffer(string: answer.reason ?? "")))
    }

    /// The emulator's answer to one push, independent of the HTTP server that sends it: the status, the
    /// reason (also the plain-text body), and the `Retry-After` and `Location` headers.
    struct Answer {
        var status: Int
        var reason: String?
        var retryAfter: String?
        var location: String?
    }

    /// Judges one `POST /push/<id>` and records it.
    /// - Parameter header: a request header's value by case-insensitive name.
    func judge(id: String, body: [UInt8], header: (String) -> String?, origin: String) -> Answer {
        var recorded: [String: String] = [:]
        for name in ["ttl", "urgency", "topic", "content-encoding"] {
            if let value = header(name) { recorded[name] = value }
        }
        func answer(_ status: Int, _ reason: String?, retryAfter: String? = nil, location: String? = nil) -> Answer {
            self.log.record(SandboxDelivery(provider: "webpush", token: id, status: status, reason: reason, headers: recorded, body: ""))
            return Answer(status: status, reason: reason, retryAfter: retryAfter, location: location)
        }
        switch id {
        case "gone": return answer(410, "subscription expired")
        case "missing": return answer(404, "no such subscription")
        case "throttled": return answer(429, "slow down", retryAfter: "7")
        case "failing": return answer(500, "push service failure")
        default: break
        }
        guard let subscription = self.issuer.subscription(id: id) else { return answer(404, "no such subscription") }
        guard body.count <= 4096 else { return answer(413, "payload too large") }
        guard header("content-encoding") == "aes128gcm" else { return answer(400, "Content-Encoding must be aes128gcm") }
        guard header("ttl").flatMap(Int.init) != nil else { return answer(400, "TTL header required") }
        if let urgency = header("urgency"), !Self.urgencies.contains(urgency) {
            return answer(400, "Urgency must be very-low, low, normal or high")
        }
        if let topic = header("topic"), !Self.isValidTopic(topic) {
            return answer(400, "Topic must be at most 32 characters of the URL-safe base64 alphabet")
        }
        do {
            _ = try VAPIDVerifier.verify(authorization: header("authorization"), origin: origin, now: Date())
        } catch {
            return answer(401, error.reason)
        }
        let location = "\(origin)/message/\(UUID().uuidString)"
        self.log.record(SandboxDelivery(provider: "webpush", token: id, status: 201, reason: nil, headers: recorded, body: "")) { delivery in
            do throws(WebPushDecryption.Failure) {
                let plaintext = try WebPushDecryption.decrypt(
                    body, privateKey: subscription.privateKey, publicKeyBytes: subscription.publicKeyBytes, authSecret: subscription.authSecret
                )
                delivery.body = String(decoding: plaintext, as: UTF8.self)
            } catch {
                delivery.reason = "the browser could not decrypt: \(error.reason)"
            }
        }
        return Answer(status: 201, reason: nil, retryAfter: nil, location: location)
    }

    /// RFC 8030's `Urgency` values.
    static let urgencies: Set<String> = ["very-low", "low", "normal", "high"]

    /// Whether a `Topic` passes Mozilla autopush's check: `^[0-9A-Za-z\-_]+=*$`, at most 32 characters.
    static func isValidTopic(_ topic: String) -> Bool {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let significant = topic.prefix { $0 != "=" }
        return topic.count <= 32 && !significant.isEmpty && significant.allSatisfy(alphabet.contains)
            && topic.dropFirst(significant.count).allSatisfy { $0 == "=" }
    }
}
