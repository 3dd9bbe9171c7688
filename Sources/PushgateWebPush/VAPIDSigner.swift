public import Crypto
public import Foundation
import PushgateProviderSupport
import Synchronization

/// Builds VAPID `Authorization` headers (RFC 8292) and reuses each one per push-service origin until an hour
/// before its token expires.
///
/// The header is `vapid t=<JWT>, k=<base64url uncompressed public key>`; the ES256 JWT carries `aud` (the
/// endpoint's origin), `exp` (now + 12 h) and `sub` (the contact).
///
/// A lock, not an actor: every message asks for a header, and a cached answer should cost no executor hop.
public final class VAPIDSigner: Sendable {
    /// How long a token is valid.
    public static let tokenLifetime: TimeInterval = 12 * 3600
    /// How long before expiry a cached header is replaced.
    public static let refreshMargin: TimeInterval = 3600

    /// Why no header could be built.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What went wrong.
        public let reason: String
        public var description: String { self.reason }
    }

    private struct CachedHeader {
        var value: String
        var refreshAt: Date
    }

    private let key: P256.Signing.PrivateKey
    /// The `sub` claim: a `mailto:` or `https:` contact.
    public let subject: String
    /// The application server key, base64url of the uncompressed public key (the `k=` parameter).
    public let publicKey: String
    private let now: @Sendable () -> Date
    private let cache = Mutex<[String: CachedHeader]>([:])

    /// Creates a signer.
    /// - Parameters:
    ///   - key: the VAPID private key.
    ///   - contact: an e-mail address, or a `mailto:` or `https:` URI used as is.
    ///   - now: the clock (tests pass a fixed one).
    public init(key: P256.Signing.PrivateKey, contact: String, now: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.subject = Self.subject(forContact: contact)
        self.publicKey = Base64URL.encode(key.publicKey.x963Representation)
        self.now = now
    }

    /// Reads a PEM private key, SEC1 or PKCS#8.
    public static func loadKey(pem: String) throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(pemRepresentation: pem)
    }

    /// The `sub` claim for a configured contact: `mailto:` is prepended unless it already is a `mailto:` or
    /// `https:` URI.
    public static func subject(forContact contact: String) -> String {
        let trimmed = contact.trimmingCharacters(in: .whitespaces)
        let lowered = trimmed.lowercased()
        return lowered.hasPrefix("mailto:") || lowered.hasPrefix("https:") ? trimmed : "mailto:" + trimmed
    }

    /// How many push services' headers are kept at most.
    static let maximumCachedOrigins = 1024

    /// The number of push services whose header is kept now.
    var cachedOriginCount: Int { self.cache.withLock { $0.count } }

    /// The `Authorization` header value for a request to `endpoint`, from the cache when still fresh.
    public func authorization(for endpoint: URL) throws(Failure) -> String {
        try self.authorization(forOrigin: PushEndpoint.origin(of: endpoint))
    }

    /// The `Authorization` header value for requests to `origin` (``PushEndpoint/origin(of:)`` of their URL), from the
    /// cache when still fresh.
    func authorization(forOrigin origin: String?) throws(Failure) -> String {
        guard let origin else { throw Failure(reason: "endpoint has no origin") }
        let now = self.now()
        if let cached = self.cache.withLock({ $0[origin] }), cached.refreshAt > now {
            return cached.value
        }
        let expiry = Int64((now.timeIntervalSince1970 + Self.tokenLifetime).rounded(.down))
        let token: String
        do {
            token = try JSONWebToken.es256(claims: ["aud": .string(origin), "exp": .integer(expiry), "sub": .string(self.subject)], key: self.key)
        } catch {
            throw Failure(reason: "could not sign the VAPID token")
        }
        let value = "vapid t=\(token), k=\(self.publicKey)"
        self.cache.withLock { cache in
            if cache.count >= Self.maximumCachedOrigins {
                // Origins come from subscriptions, which anyone with a pusher chooses: the expired go
                // first, and when none has, the whole table (a signature each is all it costs).
                cache = cache.filter { $0.value.refreshAt > now }
                if cache.count >= Self.maximumCachedOrigins { cache.removeAll(keepingCapacity: true) }
            }
            cache[origin] = CachedHeader(value: value, refreshAt: Date(timeIntervalSince1970: TimeInterval(expiry) - Self.refreshMargin))
        }
        return value
    }
}
