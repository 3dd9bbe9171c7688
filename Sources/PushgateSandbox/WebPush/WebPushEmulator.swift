import Foundation
import HTTPTypes
public import Hummingbird
import NIOCore
import PushgateProviderSupport

/// A Web Push service on loopback: it accepts messages for the subscriptions it issued, checks VAPID
/// (signature, audience, expiry, contact), decrypts the `aes128gcm` body with the subscription's keys,
/// and records what the browser would receive.
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

    func receive(id: String, body: [UInt8], headers: HTTPFields, origin: String) -> Response {
        var recorded: [String: String] = [:]
        for name in ["ttl", "urgency", "topic", "content-encoding"] {
            if let field = HTTPField.Name(name), let value = headers[field] { recorded[name] = value }
        }
        func answer(_ status: HTTPResponse.Status, _ reason: String?, plaintext: String = "", extra: HTTPFields = [:]) -> Response {
            self.log.record(SandboxDelivery(provider: "webpush", token: id, status: Int(status.code), reason: reason, headers: recorded, body: plaintext))
            return Response(status: status, headers: extra, body: .init(byteBuffer: ByteBuffer(string: reason ?? "")))
        }
        switch id {
        case "gone": return answer(.gone, "subscription expired")
        case "missing": return answer(.notFound, "no such subscription")
        case "throttled": return answer(.tooManyRequests, "slow down", extra: [.retryAfter: "7"])
        case "failing": return answer(.internalServerError, "push service failure")
        default: break
        }
        guard let subscription = self.issuer.subscription(id: id) else { return answer(.notFound, "no such subscription") }
        guard body.count <= 4096 else { return answer(.contentTooLarge, "payload too large") }
        guard headers[.contentEncoding] == "aes128gcm" else { return answer(.badRequest, "Content-Encoding must be aes128gcm") }
        guard headers[HTTPField.Name("TTL")!].flatMap(Int.init) != nil else { return answer(.badRequest, "TTL header required") }
        do {
            _ = try VAPIDVerifier.verify(authorization: headers[.authorization], origin: origin, now: Date())
        } catch {
            return answer(.unauthorized, error.reason)
        }
        do {
            let plaintext = try WebPushDecryption.decrypt(
                body, privateKey: subscription.privateKey, publicKeyBytes: subscription.publicKeyBytes, authSecret: subscription.authSecret
            )
            return answer(.created, nil, plaintext: String(decoding: plaintext, as: UTF8.self), extra: [.location: "\(origin)/message/\(UUID().uuidString)"])
        } catch {
            return answer(.badRequest, error.reason)
        }
    }
}
