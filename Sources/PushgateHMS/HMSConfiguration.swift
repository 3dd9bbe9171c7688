import Foundation
import NIOSSL
public import PushgateConfig
public import PushgateProviderSupport

/// The settings of one `type: hms` app (Huawei Push Kit).
///
/// ```yaml
/// apps:
///   com.example.huawei:
///     type: hms
///     app_id: "101234567"             # the AppGallery Connect app id (the OAuth client id)
///     app_secret_file: /etc/pushgate/hms-secret   # or app_secret: "…"
///     base_url: https://push-api.cloud.huawei.com
///     token_url: https://oauth-login.cloud.huawei.com/oauth2/v3/token
///     ca_file: /etc/pushgate/extra-ca.pem
///     max_connections: 20
///     inflight_request_limit: 512
/// ```
public struct HMSConfiguration: Sendable {
    /// The configured app id (or glob) under `apps`.
    public var appID: String
    /// Huawei's app id, which is also the OAuth client id.
    public var hmsAppID: String
    /// The OAuth client secret.
    public var appSecret: String
    /// The push server, without a trailing slash.
    public var baseURL: String
    /// The OAuth token endpoint.
    public var tokenURL: String
    /// PEM trust anchors added to the system roots.
    public var caFile: String?
    /// The most concurrent requests.
    public var maxConnections: Int
    /// The most deliveries waiting or in flight.
    public var inflightRequestLimit: Int
    /// Keys present that this back end does not read.
    public var unknownKeys: [String]
    /// The HTTP proxy requests go through, set by the gateway.
    public var proxy: OutboundProxy? = nil

    /// Every key this back end reads.
    public static let knownKeys: Set<String> = [
        "type", "app_id", "app_secret", "app_secret_file", "base_url", "token_url", "ca_file", "max_connections", "inflight_request_limit",
    ]

    /// Reads and checks the app's settings.
    /// - Throws: ``ConfigurationError`` naming the first key that cannot be used (never showing the secret).
    public init(settings: AppSettings) throws {
        let section = settings.options
        guard let hmsAppID = try section.string("app_id"), !hmsAppID.isEmpty else {
            throw ConfigurationError(key: section.keyPath("app_id"), "is required: the app id from AppGallery Connect")
        }
        guard URLPathSegment.isPlain(hmsAppID) else {
            throw ConfigurationError(key: section.keyPath("app_id"), "must be the app id from AppGallery Connect (digits), with no `/`, `?`, `#`, `%` or space")
        }
        let secret: String
        if try section.string("app_secret_file") != nil, try section.string("app_secret") != nil {
            // Which one would be used is not for the reader of the file to guess.
            throw ConfigurationError(key: section.keyPath("app_secret"), "and app_secret_file are both set: keep one")
        }
        if let file = try section.string("app_secret_file") {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ConfigurationError(key: section.keyPath("app_secret_file"), "cannot read \(ConfigurationError.shownPath(file))")
            }
            secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            secret = try section.string("app_secret") ?? ""
        }
        guard !secret.isEmpty else {
            throw ConfigurationError(key: section.keyPath("app_secret"), "is required (or app_secret_file): the app secret from AppGallery Connect")
        }
        self.appID = settings.id
        self.hmsAppID = hmsAppID
        self.appSecret = secret
        self.baseURL = try Self.url(section, "base_url", default: HMS.defaultBaseURL)
        self.tokenURL = try Self.url(section, "token_url", default: HMS.defaultTokenURL)
        if let caFile = try section.string("ca_file") {
            guard let certificates = try? NIOSSLCertificate.fromPEMFile(caFile), !certificates.isEmpty else {
                throw ConfigurationError(key: section.keyPath("ca_file"), "cannot read PEM certificates from \(ConfigurationError.shownPath(caFile))")
            }
            self.caFile = caFile
        }
        self.maxConnections = try section.int("max_connections", in: 1...10_000) ?? 20
        self.inflightRequestLimit = try section.int("inflight_request_limit", in: 1...1_000_000) ?? 512
        self.unknownKeys = section.unknownKeys(known: Self.knownKeys)
    }

    /// `<base_url>/v1/<app_id>/messages:send`.
    public var sendURL: String {
        "\(self.baseURL)/v1/\(self.hmsAppID)/messages:send"
    }

    private static func url(_ section: ConfigSection, _ key: String, default fallback: String) throws -> String {
        let text = try section.string(key) ?? fallback
        guard let components = URLComponents(string: text), ["http", "https"].contains(components.scheme ?? ""), components.encodedHost?.isEmpty == false else {
            throw ConfigurationError(key: section.keyPath(key), "must be an http(s) URL such as \(fallback)")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
