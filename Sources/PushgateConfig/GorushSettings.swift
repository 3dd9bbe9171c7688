import Foundation

/// The `gorush` section: the gorush-compatible front end. Key names follow gorush's `config.yml` where
/// they map (`core.max_notification`, `core.sync`, `log.hide_token`, `api.push_uri`, …).
///
/// ```yaml
/// gorush:
///   ios_app: com.example.ios          # the APNs app for platform 1 (another APNs app's topic picks that app)
///   android_app: com.example.android  # the FCM app for platform 2
///   huawei_app: com.example.huawei    # the HMS app for platform 3
///   max_notification: 100             # notifications one request may carry
///   sync: false                       # wait for delivery and list failures in `logs`
///   sync_timeout: 30                  # seconds a synchronous answer waits for providers
///   hide_token: true                  # mask tokens in `logs` and feedback as gorush does
///   hide_messages: false              # replace `message` in `logs` and feedback
///   auth_tokens:                      # bearer tokens; each may be limited to some apps
///     - secret-one
///     - {token: secret-two, apps: [com.example.ios]}
///   allow_unauthenticated: false      # serve callers without a token (gorush's own behaviour)
///   feedback_hook_url: ''             # each failure entry is POSTed here, retried until 2xx
///   feedback_header: ['x-api-key:…']  # extra headers, "name:value"
///   feedback_timeout: 10              # seconds per webhook request
///   api: {push_uri: /api/push, stat_app_uri: /api/stat/app, health_uri: /healthz}
///   grpc: {enabled: false, port: 9000}  # gorush's gRPC API, on the first of http.bind_addresses
/// ```
public struct GorushSettings: Sendable, Equatable {
    /// A bearer token and the apps it may send through (nil: all).
    public struct AuthToken: Sendable, Equatable {
        /// The secret the caller sends as `Authorization: Bearer <token>`.
        public var token: String
        /// The app ids it may deliver through; nil means every app.
        public var apps: Set<String>?

        /// Creates a token entry.
        public init(token: String, apps: Set<String>? = nil) {
            self.token = token
            self.apps = apps
        }
    }

    /// The APNs app for platform 1.
    public var iosApp: String?
    /// The FCM app for platform 2.
    public var androidApp: String?
    /// The HMS app for platform 3.
    public var huaweiApp: String?
    /// The most notifications one request may carry (gorush's `core.max_notification`).
    public var maxNotification = 100
    /// Whether `/api/push` waits for delivery (gorush's `core.sync`).
    public var sync = false
    /// How long a synchronous answer waits; what is not delivered by then (or was answered "retry later")
    /// is queued for the outbox, and not listed among the failures.
    public var syncTimeout: Duration = .seconds(30)
    /// Whether tokens are masked in answers and feedback (gorush's `log.hide_token`).
    public var hideToken = true
    /// Whether `message` is replaced in answers and feedback (gorush's `log.hide_messages`).
    public var hideMessages = false
    /// Bearer tokens; empty: no authentication configured.
    public var authTokens: [AuthToken] = []
    /// Whether callers without a token are served.
    public var allowUnauthenticated = false
    /// Where failure entries are POSTed, if anywhere.
    public var feedbackHookURL: String?
    /// Extra webhook headers, as name and value.
    public var feedbackHeaders: [(name: String, value: String)] = []
    /// The deadline of one webhook request.
    public var feedbackTimeout: Duration = .seconds(10)
    /// `POST` path of notifications.
    public var pushPath = "/api/push"
    /// `GET` path of the counters.
    public var statAppPath = "/api/stat/app"
    /// `GET`/`HEAD` path of the heartbeat.
    public var healthPath = "/healthz"
    /// Whether the gRPC server is on.
    public var grpcEnabled = false
    /// The gRPC port (on the first of `http.bind_addresses`; 0 picks a free one).
    public var grpcPort = 9000

    /// The request body allowed for each of ``maxNotification`` notifications: 500 tokens of FCM's length
    /// (about 165 bytes each, quoted) and a 4-KiB payload.
    public static let bytesPerNotification = 160 * 1024

    /// The largest request body `POST /api/push` takes: room for ``maxNotification`` of gorush's largest
    /// notifications, at least 1 MiB (16 MiB at the default 100).
    public var requestBodyLimit: Int { max(1 << 20, self.maxNotification * Self.bytesPerNotification) }

    /// Whether the routes are served: with tokens configured, or with unauthenticated access allowed.
    public var isServed: Bool { !self.authTokens.isEmpty || self.allowUnauthenticated }

    /// The defaults.
    public init() {}

    public static func == (lhs: GorushSettings, rhs: GorushSettings) -> Bool {
        lhs.iosApp == rhs.iosApp && lhs.androidApp == rhs.androidApp && lhs.huaweiApp == rhs.huaweiApp && lhs.maxNotification == rhs.maxNotification
            && lhs.sync == rhs.sync && lhs.syncTimeout == rhs.syncTimeout && lhs.hideToken == rhs.hideToken && lhs.hideMessages == rhs.hideMessages
            && lhs.authTokens == rhs.authTokens && lhs.allowUnauthenticated == rhs.allowUnauthenticated && lhs.feedbackHookURL == rhs.feedbackHookURL
            && lhs.feedbackHeaders.map(\.name) == rhs.feedbackHeaders.map(\.name) && lhs.feedbackHeaders.map(\.value) == rhs.feedbackHeaders.map(\.value)
            && lhs.feedbackTimeout == rhs.feedbackTimeout && lhs.pushPath == rhs.pushPath && lhs.statAppPath == rhs.statAppPath
            && lhs.healthPath == rhs.healthPath && lhs.grpcEnabled == rhs.grpcEnabled && lhs.grpcPort == rhs.grpcPort
    }

    static let knownKeys: Set<String> = [
        "ios_app", "android_app", "huawei_app", "max_notification", "sync", "sync_timeout", "hide_token", "hide_messages", "auth_tokens",
        "allow_unauthenticated", "feedback_hook_url", "feedback_header", "feedback_timeout", "api", "grpc",
    ]

    init(_ section: ConfigSection, warnings: inout [String]) throws {
        self.iosApp = try section.string("ios_app")
        self.androidApp = try section.string("android_app")
        self.huaweiApp = try section.string("huawei_app")
        self.maxNotification = try section.int("max_notification", in: 1...100_000) ?? self.maxNotification
        self.sync = try section.bool("sync") ?? false
        self.syncTimeout = .seconds(try section.int("sync_timeout", in: 1...300) ?? 30)
        self.hideToken = try section.bool("hide_token") ?? true
        self.hideMessages = try section.bool("hide_messages") ?? false
        self.allowUnauthenticated = try section.bool("allow_unauthenticated") ?? false
        self.authTokens = try Self.authTokens(section)
        if let url = try section.string("feedback_hook_url"), !url.isEmpty {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host?.isEmpty == false else {
                throw ConfigurationError(key: section.keyPath("feedback_hook_url"), "must be an http:// or https:// URL")
            }
            self.feedbackHookURL = url
        }
        self.feedbackHeaders = try (section.stringList("feedback_header") ?? []).enumerated().map { index, header in
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                throw ConfigurationError(key: "\(section.keyPath("feedback_header"))[\(index)]", "expected \"name:value\"")
            }
            let name = header[..<colon].trimmingCharacters(in: .whitespaces)
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            return (name, value)
        }
        self.feedbackTimeout = .seconds(try section.int("feedback_timeout", in: 1...300) ?? 10)
        if let api = try section.section("api") {
            self.pushPath = try Self.path(api, "push_uri") ?? self.pushPath
            self.statAppPath = try Self.path(api, "stat_app_uri") ?? self.statAppPath
            self.healthPath = try Self.path(api, "health_uri") ?? self.healthPath
            for key in ["stat_go_uri", "config_uri", "sys_stat_uri", "metric_uri"] where api.map[key] != nil {
                warnings.append("\(api.keyPath(key)): not served (Pushgate's metrics are at /metrics; the configuration is never served)")
            }
            warnings += api.unknownKeys(known: ["push_uri", "stat_app_uri", "health_uri", "stat_go_uri", "config_uri", "sys_stat_uri", "metric_uri"])
                .map { "unknown key \($0) (ignored)" }
        }
        if let grpc = try section.section("grpc") {
            self.grpcEnabled = try grpc.bool("enabled") ?? false
            self.grpcPort = try grpc.int("port", in: 0...65535) ?? 9000
            warnings += grpc.unknownKeys(known: ["enabled", "port"]).map { "unknown key \($0) (ignored)" }
        }
        if !self.isServed {
            warnings.append(
                "\(section.path): neither auth_tokens nor allow_unauthenticated is set, so the gorush routes are not served "
                    + "(set auth_tokens, or allow_unauthenticated: true for callers that send no credentials)"
            )
        }
        if self.allowUnauthenticated, self.authTokens.contains(where: { $0.apps != nil }) {
            warnings.append(
                "\(section.keyPath("allow_unauthenticated")): callers that send no token may use every app, so the apps "
                    + "limits of auth_tokens bind only callers that send one"
            )
        }
        warnings += section.unknownKeys(known: Self.knownKeys).map { "unknown key \($0) (ignored)" }
    }

    private static func path(_ section: ConfigSection, _ key: String) throws -> String? {
        guard let path = try section.string(key) else { return nil }
        guard path.hasPrefix("/"), !path.contains(where: { $0 == " " || $0 == "?" || $0 == "#" }) else {
            throw ConfigurationError(key: section.keyPath(key), "must be a path starting with /")
        }
        return path
    }

    private static func authTokens(_ section: ConfigSection) throws -> [AuthToken] {
        let key = section.keyPath("auth_tokens")
        switch section.map["auth_tokens"] {
        case nil, .null?: return []
        case .list(let items)?:
            return try items.enumerated().map { index, item in
                let itemKey = "\(key)[\(index)]"
                switch item {
                case .string(let token):
                    guard !token.isEmpty else { throw ConfigurationError(key: itemKey, "must not be empty") }
                    return AuthToken(token: token)
                case .map(let map):
                    let entry = ConfigSection(path: itemKey, map: map)
                    guard let token = try entry.string("token"), !token.isEmpty else {
                        throw ConfigurationError(key: entry.keyPath("token"), "is required and must not be empty")
                    }
                    let unknown = entry.unknownKeys(known: ["token", "apps"])
                    if let first = unknown.first { throw ConfigurationError(key: first, "is not a key of an auth token (token, apps)") }
                    return AuthToken(token: token, apps: try entry.stringList("apps").map(Set.init))
                default:
                    throw ConfigurationError(key: itemKey, "expected a token or a mapping with token and apps, found \(item.typeName)")
                }
            }
        case let value?:
            throw ConfigurationError(key: key, "expected a list of tokens, found \(value.typeName)")
        }
    }
}

