public import Crypto
import Foundation
public import PushgateProviderSupport
public import PushgateConfig

/// The settings of one `type: webpush` app, read from Sygnal's keys.
///
/// | Key | Default |
/// |---|---|
/// | `vapid_private_key` | required: path of a PEM private key (SEC1 or PKCS#8) |
/// | `vapid_contact_email` | required: an e-mail address (or a `mailto:`/`https:` URI) |
/// | `allowed_endpoints` | unset: any public endpoint; globs matched against `host[:port]` |
/// | `ttl` | 900 seconds |
/// | `max_connections` | 20 |
/// | `inflight_request_limit` | 512 |
public struct WebPushConfiguration: Sendable, CustomStringConvertible {
    /// The keys this back end reads.
    public static let knownKeys: Set<String> = [
        "type", "vapid_private_key", "vapid_contact_email", "allowed_endpoints", "ttl", "max_connections", "inflight_request_limit",
    ]

    /// The app id (or glob) of the configured app.
    public var appID: String
    /// The VAPID signing key.
    public var vapidKey: P256.Signing.PrivateKey
    /// The contact as configured.
    public var contact: String
    /// Globs of `host[:port]` that may be used; nil allows any public https endpoint.
    public var allowedEndpoints: [String]?
    /// The `TTL` header when the notification does not set one, in seconds.
    public var ttl: Int
    /// Requests in flight at once.
    public var maxConnections: Int
    /// Deliveries waiting or in flight at once; beyond it deliveries are answered `retryLater`.
    public var inflightRequestLimit: Int
    /// Keys present in the app's section that this back end does not read, as dotted paths, for a warning.
    public var unknownKeys: [String]
    /// The HTTP proxy requests go through (the global `proxy` key, else `HTTPS_PROXY`), set by the gateway.
    public var proxy: OutboundProxy? = nil

    /// Reads an app's settings; the key file is read now.
    /// - Throws: ``ConfigurationError`` naming the key at fault.
    public init(settings: AppSettings) throws {
        let section = settings.options
        guard let keyPath = try section.string("vapid_private_key"), !keyPath.isEmpty else {
            throw ConfigurationError(key: section.keyPath("vapid_private_key"), "is required: the path of the VAPID private key (PEM)")
        }
        let pem: String
        do {
            pem = try String(contentsOfFile: keyPath, encoding: .utf8)
        } catch {
            throw ConfigurationError(key: section.keyPath("vapid_private_key"), "cannot read \(ConfigurationError.shownPath(keyPath))")
        }
        do {
            self.vapidKey = try VAPIDSigner.loadKey(pem: pem)
        } catch {
            throw ConfigurationError(key: section.keyPath("vapid_private_key"), "\(ConfigurationError.shownPath(keyPath)) is not a PEM P-256 private key")
        }
        guard let contact = try section.string("vapid_contact_email"), !contact.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ConfigurationError(key: section.keyPath("vapid_contact_email"), "is required: a contact e-mail address for the push services")
        }
        // The push services check the token's `sub` claim: Apple's and Mozilla's refuse one that is neither
        // a mailto: address nor an https: URL, and every delivery of the app would then fail.
        guard Self.isContact(VAPIDSigner.subject(forContact: contact)) else {
            throw ConfigurationError(
                key: section.keyPath("vapid_contact_email"), "must be an e-mail address (or a mailto: or https: URI): push services refuse a VAPID token without one"
            )
        }
        self.appID = settings.id
        self.contact = contact
        self.allowedEndpoints = try section.hostGlobs("allowed_endpoints")
        self.ttl = try section.int("ttl", in: 0...2_419_200) ?? 900
        self.maxConnections = try section.int("max_connections", in: 1...10_000) ?? 20
        self.inflightRequestLimit = try section.int("inflight_request_limit", in: 1...1_000_000) ?? 512
        self.unknownKeys = section.unknownKeys(known: Self.knownKeys)
    }

    /// Whether a VAPID `sub` claim is a contact push services take: `mailto:` and an address with a local
    /// part and a domain, or an `https:` URL with a host; no white space in either.
    static func isContact(_ subject: String) -> Bool {
        guard !subject.unicodeScalars.contains(where: { $0.properties.isWhitespace }) else { return false }
        let lowered = subject.lowercased()
        if lowered.hasPrefix("mailto:") {
            let parts = subject.dropFirst("mailto:".count).split(separator: "@", omittingEmptySubsequences: false)
            return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty && !parts[1].hasPrefix(".") && !parts[1].hasSuffix(".")
        }
        guard lowered.hasPrefix("https://"), let host = URLComponents(string: subject)?.host else { return false }
        return !host.isEmpty
    }

    /// A summary without the key.
    public var description: String {
        "WebPushConfiguration(app: \(self.appID), ttl: \(self.ttl), max_connections: \(self.maxConnections), "
            + "inflight_request_limit: \(self.inflightRequestLimit), allowed_endpoints: \(self.allowedEndpoints.map { "\($0.count) globs" } ?? "any"))"
    }
}
