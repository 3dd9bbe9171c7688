import Foundation
public import PushgateProviderSupport
public import PushgateConfig
public import PushgateCore
import NIOSSL

/// The settings of one `type: gcm` app: Sygnal's keys for the HTTP v1 API plus Pushgate's `base_url` and
/// `ca_file`.
///
/// ```yaml
/// apps:
///   im.example.android:
///     type: gcm
///     api_version: v1
///     project_id: example-project
///     service_account_file: /etc/pushgate/service-account.json
///     fcm_options: {android: {notification: {channel_id: messages}}}
/// ```
public struct FCMConfiguration: Sendable {
    /// The app id (or glob).
    public var appID: String
    /// The Firebase project messages are sent through.
    public var projectID: String
    /// The parsed service account.
    public var serviceAccount: ServiceAccount
    /// Where the service account was read from.
    public var serviceAccountFile: String
    /// The most concurrent requests to FCM (and the connection pool size).
    public var maxConnections: Int
    /// The most deliveries waiting or in flight; beyond it deliveries are answered `retryLater` at once.
    public var inflightRequestLimit: Int
    /// Sygnal's `fcm_options`: the base the Matrix front end merges its messages over (checked here, read
    /// by that front end; other front ends' messages are sent as they state them).
    public var fcmOptions: [String: JSONValue]
    /// Sygnal's `send_badge_counts` (read by front ends that build the payload).
    public var sendBadgeCounts: Bool
    /// The FCM endpoint, without a trailing slash.
    public var baseURL: String
    /// PEM trust anchors added to the system roots, for TLS to ``baseURL`` and the token endpoint.
    public var caFile: String?
    /// Keys present in the app's section that Pushgate does not read, as dotted paths.
    public var unknownKeys: [String]
    /// The HTTP proxy requests go through (the global `proxy` key, else `HTTPS_PROXY`), set by the gateway.
    public var proxy: OutboundProxy? = nil

    /// Every key this back end reads.
    public static let knownKeys: Set<String> = [
        "type", "api_version", "api_key", "project_id", "service_account_file", "max_connections",
        "inflight_request_limit", "fcm_options", "send_badge_counts", "base_url", "ca_file",
    ]

    /// The members of an FCM HTTP v1 `Message` that `fcm_options` may set (the token and target are each
    /// notification's), and of its `android` section (`AndroidConfig`).
    static let messageKeys: Set<String> = ["data", "notification", "android", "webpush", "apns", "fcm_options"]
    static let androidKeys: Set<String> = [
        "collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification", "fcm_options", "direct_boot_ok",
    ]

    /// The keys of `fcm_options` (and of its `android`) that are not FCM's: a misspelt `andriod` is sent as
    /// it is and FCM refuses every message with 400.
    static func unknownMessageKeys(_ options: ConfigSection) throws -> [String] {
        var unknown = options.unknownKeys(known: Self.messageKeys)
        if let android = try options.section("android") { unknown += android.unknownKeys(known: Self.androidKeys) }
        return unknown
    }

    /// Reads and checks the app's settings, loading the service-account file.
    /// - Throws: ``ConfigurationError`` naming the first key that cannot be used.
    public init(settings: AppSettings) throws {
        let section = settings.options
        let apiVersion = try section.string("api_version")
        if apiVersion == "legacy" || section.map["api_key"] != nil {
            let key = apiVersion == "legacy" ? "api_version" : "api_key"
            throw ConfigurationError(
                key: section.keyPath(key),
                "Google retired the legacy FCM API in 2024; use the HTTP v1 API with `api_version: v1`, `project_id` and `service_account_file`"
            )
        }
        if let apiVersion, apiVersion != "v1" {
            throw ConfigurationError(key: section.keyPath("api_version"), "must be v1, found \(apiVersion)")
        }
        guard let projectID = try section.string("project_id"), !projectID.isEmpty else {
            throw ConfigurationError(key: section.keyPath("project_id"), "is required: the Firebase project id (api_version: v1)")
        }
        guard URLPathSegment.isPlain(projectID) else {
            throw ConfigurationError(key: section.keyPath("project_id"), "must be a Firebase project id (letters, digits, hyphens), with no `/`, `?`, `#`, `%` or space")
        }
        guard let file = try section.string("service_account_file"), !file.isEmpty else {
            throw ConfigurationError(key: section.keyPath("service_account_file"), "is required: the path of the Google service-account JSON file")
        }
        self.appID = settings.id
        self.projectID = projectID
        self.serviceAccountFile = file
        self.serviceAccount = try Self.loadServiceAccount(file, key: section.keyPath("service_account_file"))
        self.maxConnections = try section.int("max_connections", in: 1...10_000) ?? 20
        self.inflightRequestLimit = try section.int("inflight_request_limit", in: 1...1_000_000) ?? 512
        self.sendBadgeCounts = try section.bool("send_badge_counts") ?? true
        if let options = try section.section("fcm_options") {
            guard case .object(let members) = JSONValue(options.map) else { preconditionFailure("a mapping converts to an object") }
            self.fcmOptions = members
        } else {
            self.fcmOptions = [:]
        }
        let baseURL = try section.string("base_url") ?? FCM.defaultBaseURL
        guard let components = URLComponents(string: baseURL), ["http", "https"].contains(components.scheme ?? ""),
            components.encodedHost?.isEmpty == false
        else {
            throw ConfigurationError(key: section.keyPath("base_url"), "must be an http(s) URL such as \(FCM.defaultBaseURL)")
        }
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        if let caFile = try section.string("ca_file") {
            do {
                let certificates = try NIOSSLCertificate.fromPEMFile(caFile)
                if certificates.isEmpty { throw ConfigurationError(key: "", "no certificate") }
            } catch {
                throw ConfigurationError(key: section.keyPath("ca_file"), "cannot read PEM certificates from \(ConfigurationError.shownPath(caFile))")
            }
            self.caFile = caFile
        } else {
            self.caFile = nil
        }
        self.unknownKeys = section.unknownKeys(known: Self.knownKeys) + (try section.section("fcm_options").map(Self.unknownMessageKeys) ?? [])
    }

    /// The message endpoint: `<base_url>/v1/projects/<project_id>/messages:send`.
    public var sendURL: String {
        "\(self.baseURL)/v1/projects/\(self.projectID)/messages:send"
    }

    private static func loadServiceAccount(_ path: String, key: String) throws -> ServiceAccount {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError(key: key, "cannot read \(ConfigurationError.shownPath(path))")
        }
        let account: ServiceAccount
        do {
            account = try ServiceAccount(json: data)
        } catch {
            throw ConfigurationError(
                key: key,
                "\(ConfigurationError.shownPath(path)) is not a Google service-account JSON file (it needs private_key, private_key_id, client_email and token_uri)"
            )
        }
        do {
            _ = try account.signingKey()
        } catch {
            throw ConfigurationError(key: key, "the private_key in \(ConfigurationError.shownPath(path)) is not an RSA private key in PEM form")
        }
        guard URL(string: account.tokenURI)?.host != nil else {
            throw ConfigurationError(key: key, "the token_uri in \(ConfigurationError.shownPath(path)) is not a URL")
        }
        return account
    }
}
