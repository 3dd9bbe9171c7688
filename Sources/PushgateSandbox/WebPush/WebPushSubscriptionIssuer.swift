public import Crypto
import Foundation
import PushgateProviderSupport
import Synchronization

/// The subscriptions a Web Push emulator issues: each has an endpoint id, a P-256 key pair and an auth
/// secret, as a browser would create them.
public final class WebPushSubscriptionIssuer: Sendable {
    /// One issued subscription.
    public struct Subscription: Sendable {
        /// The id in the endpoint path.
        public let id: String
        /// The browser's private key.
        public let privateKey: P256.KeyAgreement.PrivateKey
        /// The auth secret.
        public let authSecret: [UInt8]
        /// The public key's uncompressed point (the `p256dh`), which decryption mixes in.
        let publicKeyBytes: [UInt8]

        init(id: String, privateKey: P256.KeyAgreement.PrivateKey, authSecret: [UInt8]) {
            self.id = id
            self.privateKey = privateKey
            self.authSecret = authSecret
            self.publicKeyBytes = Array(privateKey.publicKey.x963Representation)
        }

        /// The subscription JSON a site would store (the token Pushgate takes).
        public func json(baseURL: String) -> String {
            let object: [String: Any] = [
                "endpoint": "\(baseURL)/push/\(self.id)",
                "keys": ["p256dh": Base64URL.encode(self.privateKey.publicKey.x963Representation), "auth": Base64URL.encode(self.authSecret)],
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
    }

    private let subscriptions = Mutex<[String: Subscription]>([:])

    /// Creates an issuer with no subscriptions.
    public init() {}

    /// Issues a subscription; `id` picks the endpoint id (the special ids `gone`, `missing`, `throttled` and
    /// `failing` make the emulator answer 410, 404, 429 and 500).
    public func issue(id: String? = nil) -> Subscription {
        let subscription = Subscription(
            id: id ?? UUID().uuidString.lowercased(), privateKey: P256.KeyAgreement.PrivateKey(), authSecret: (0..<16).map { _ in UInt8.random(in: 0...255) }
        )
        self.subscriptions.withLock { $0[subscription.id] = subscription }
        return subscription
    }

    /// The subscription with this endpoint id.
    public func subscription(id: String) -> Subscription? {
        self.subscriptions.withLock { $0[id] }
    }
}
