public import Crypto
public import Foundation
import PushgateCore
import PushgateProviderSupport

/// A browser's push subscription, parsed from the device token: the subscription JSON
/// `{"endpoint": "https://…", "keys": {"p256dh": "…", "auth": "…"}}` with base64url keys (padded or not).
public struct WebPushSubscription: Sendable {
    /// Why a token is not a usable subscription. Every case means the token is invalid.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, without the token's content.
        public let reason: String

        init(_ reason: String) { self.reason = reason }

        public var description: String { self.reason }
    }

    /// The push service URL the notification is posted to.
    public var endpoint: URL { self.target.url }
    /// ``endpoint``'s parts, read once.
    let target: WebPushEndpoint
    /// The user agent's ECDH public key (`p256dh`).
    public let userAgentPublicKey: P256.KeyAgreement.PublicKey
    /// The 16-byte authentication secret (`auth`).
    public let authSecret: [UInt8]
    /// ``userAgentPublicKey`` as an uncompressed point (its x9.63 form), which the key derivation mixes in.
    let userAgentPublicKeyBytes: [UInt8]
    /// HMAC-SHA-256 keyed with ``authSecret``, the key derivation's first step, prepared once.
    let authKey: HMACSHA256

    /// Parses a subscription token.
    /// - Throws: ``ParseError`` when the token is not JSON, lacks a field, or has an unusable key.
    public init(token: String) throws(ParseError) {
        guard case .object(let object)? = try? JSONParser.parse(Array(token.utf8)) else {
            throw ParseError("subscription is not a JSON object")
        }
        guard let endpointText = object["endpoint"]?.stringValue, !endpointText.isEmpty else {
            throw ParseError("subscription has no endpoint")
        }
        // The plain form push services hand out is read without Foundation (``PushEndpoint/init(text:)``).
        guard let endpoint = PushEndpoint(text: endpointText), endpoint.scheme != nil, endpoint.host != nil else {
            throw ParseError("subscription endpoint is not an absolute URL")
        }
        guard case .object(let keys)? = object["keys"] else {
            throw ParseError("subscription has no keys")
        }
        guard let p256dhText = keys["p256dh"]?.stringValue, let p256dh = Base64URL.decode(p256dhText) else {
            throw ParseError("subscription p256dh key is missing or not base64url")
        }
        guard p256dh.count == 65, p256dh.first == 0x04,
            let publicKey = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        else {
            throw ParseError("subscription p256dh key is not an uncompressed P-256 point")
        }
        guard let authText = keys["auth"]?.stringValue, let auth = Base64URL.decode(authText) else {
            throw ParseError("subscription auth secret is missing or not base64url")
        }
        guard auth.count == 16 else {
            throw ParseError("subscription auth secret is not 16 bytes")
        }
        self.target = WebPushEndpoint(endpoint)
        self.userAgentPublicKey = publicKey
        self.authSecret = auth
        self.authKey = HMACSHA256(key: auth)
        // The key parsed from exactly these 65 bytes (an uncompressed point), which are its x9.63 form.
        self.userAgentPublicKeyBytes = p256dh
    }

    /// Creates a subscription from its parts.
    public init(endpoint: URL, userAgentPublicKey: P256.KeyAgreement.PublicKey, authSecret: [UInt8]) {
        self.target = WebPushEndpoint(endpoint)
        self.userAgentPublicKey = userAgentPublicKey
        self.authSecret = authSecret
        self.authKey = HMACSHA256(key: authSecret)
        self.userAgentPublicKeyBytes = Array(userAgentPublicKey.x963Representation)
    }
}
