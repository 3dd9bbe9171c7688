/// The `nextcloud` section: the Nextcloud push proxy front end.
///
/// ```yaml
/// nextcloud:
///   path_prefix: ''            # the proxy's routes: <prefix>/devices, <prefix>/notifications
///   fcm_app: com.example.files.android
///   apns_app: com.example.files.ios
///   apns_voip_app: com.example.talk.ios.voip
///   routes:                    # optional, first match wins: route by the registering client's User-Agent
///     - {user_agent: 'Nextcloud-Talk', app: com.example.talk.ios, voip_app: com.example.talk.ios.voip}
///   alert_text: New notification   # what iOS shows if the app's notification extension cannot
///   delivery_timeout: 10       # seconds a batch waits for providers before queueing the rest
///   max_batch_size: 1000       # sizes POST /notifications' body limit, 4 KiB an entry (413 beyond)
///   rate_limit:                # fair use per sending server (subscription key, else address); off by default
///     notifications: 100000    # entries accepted per window; over it, 429
///     window: 3600             # seconds
///     x_forwarded_for: false   # take the address from X-Forwarded-For's last entry (behind a trusted proxy)
///   identity_proof:            # the cloudId check that lets a new key take over a registered identifier
///     timeout: 5               # seconds
///     allowed_hosts: []        # globs of hosts that may be on private or loopback addresses
///     http_hosts: []           # globs of hosts that may be asked over plain http
/// ```
public struct NextcloudSettings: Sendable, Equatable {
    /// A User-Agent rule.
    public struct Route: Sendable, Equatable {
        /// A regular expression searched in the User-Agent.
        public var userAgentPattern: String
        /// The app for the device's (non-VoIP) token.
        public var app: String
        /// The app for a PushKit VoIP token, if any.
        public var voipApp: String?
    }

    /// Prefix of the proxy's routes (default empty: `/devices`, `/notifications`).
    public var pathPrefix = ""
    /// The app for FCM tokens when no route matches.
    public var fcmApp: String?
    /// The app for APNs tokens when no route matches.
    public var apnsApp: String?
    /// The app for PushKit VoIP tokens when no route matches.
    public var apnsVoipApp: String?
    /// User-Agent routes, in order.
    public var routes: [Route] = []
    /// The visible text of APNs alerts, shown when the app's notification service extension cannot
    /// decrypt the subject.
    public var alertText = "New notification"
    /// How long a batch waits for providers; what is not delivered by then goes to the outbox.
    public var deliveryTimeout: Duration = .seconds(10)
    /// The entries `POST /notifications`' body limit is sized for (4 KiB each): a body within the limit
    /// is handled whole, however many entries it holds, as Nextcloud's server never sends a refused
    /// batch again.
    public var maxBatchSize = 1000
    /// Fair-use limits per sending server; nil means none.
    public var rateLimit: RateLimit?
    /// The `cloudId` identity-proof lookup.
    public var identityProof = IdentityProof()

    /// Fair use: how many notification entries one sending server may post per window.
    public struct RateLimit: Sendable, Equatable {
        /// Entries accepted per window.
        public var notifications: Int
        /// The window.
        public var window: Duration
        /// Whether the sender's address is the last `X-Forwarded-For` entry (only behind a proxy that appends it).
        public var useForwardedFor: Bool

        /// Creates a limit.
        public init(notifications: Int, window: Duration = .seconds(3600), useForwardedFor: Bool = false) {
            self.notifications = notifications
            self.window = window
            self.useForwardedFor = useForwardedFor
        }
    }

    /// The outbound request that fetches a user's key from their Nextcloud server.
    public struct IdentityProof: Sendable, Equatable {
        /// How long the request may take.
        public var timeout: Duration = .seconds(5)
        /// Host globs that may resolve to loopback or private addresses.
        public var allowedHosts: [String] = []
        /// Host globs that may be asked over plain http.
        public var httpHosts: [String] = []

        /// The defaults: https only, public addresses only, 5 seconds.
        public init() {}
    }

    /// No apps: the proxy refuses registrations until some are named.
    public init() {}

    static let knownKeys: Set<String> = [
        "path_prefix", "fcm_app", "apns_app", "apns_voip_app", "routes", "alert_text", "delivery_timeout", "max_batch_size", "rate_limit",
        "identity_proof",
    ]

    init(_ section: ConfigSection, warnings: inout [String]) throws {
        var prefix = try section.string("path_prefix") ?? ""
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty, !prefix.hasPrefix("/") { prefix = "/" + prefix }
        self.pathPrefix = prefix
        self.fcmApp = try section.string("fcm_app")
        self.apnsApp = try section.string("apns_app")
        self.apnsVoipApp = try section.string("apns_voip_app")
        if case .list(let items)? = section.map["routes"] {
            var routeWarnings: [String] = []
            self.routes = try items.enumerated().map { index, item in
                let key = "\(section.keyPath("routes"))[\(index)]"
                guard case .map(let map) = item else { throw ConfigurationError(key: key, "expected a mapping with user_agent and app") }
                let route = ConfigSection(path: key, map: map)
                guard let pattern = try route.string("user_agent"), let app = try route.string("app") else {
                    throw ConfigurationError(key: key, "needs user_agent (a regular expression) and app")
                }
                guard (try? Regex(pattern)) != nil else { throw ConfigurationError(key: route.keyPath("user_agent"), "is not a valid regular expression") }
                // A misspelt `voip_app` would send a route's calls through the default VoIP app.
                routeWarnings += route.unknownKeys(known: ["user_agent", "app", "voip_app"]).map { "unknown key \($0) (ignored)" }
                return Route(userAgentPattern: pattern, app: app, voipApp: try route.string("voip_app"))
            }
            warnings += routeWarnings
        } else if let value = section.map["routes"], value != .null {
            throw ConfigurationError(key: section.keyPath("routes"), "expected a list, found \(value.typeName)")
        }
        self.alertText = try section.string("alert_text") ?? self.alertText
        self.deliveryTimeout = .seconds(try section.int("delivery_timeout", in: 1...120) ?? 10)
        self.maxBatchSize = try section.int("max_batch_size", in: 1...100_000) ?? self.maxBatchSize
        if let limit = try section.section("rate_limit") {
            let notifications = try limit.int("notifications", in: 0...Int(Int32.max))
            if let notifications, notifications > 0 {
                self.rateLimit = RateLimit(
                    notifications: notifications, window: .seconds(try limit.int("window", in: 1...86_400 * 31) ?? 3600),
                    useForwardedFor: try limit.bool("x_forwarded_for") ?? false
                )
            } else {
                // A section that limits nothing is more likely a mistake than a way of saying "off".
                warnings.append("\(limit.keyPath("notifications")) is \(notifications.map(String.init) ?? "not set"): the fair-use limit is off")
            }
            warnings += limit.unknownKeys(known: ["notifications", "window", "x_forwarded_for"]).map { "unknown key \($0) (ignored)" }
        }
        if let proof = try section.section("identity_proof") {
            self.identityProof.timeout = .seconds(try proof.int("timeout", in: 1...60) ?? 5)
            self.identityProof.allowedHosts = try proof.stringList("allowed_hosts") ?? []
            self.identityProof.httpHosts = try proof.stringList("http_hosts") ?? []
            warnings += proof.unknownKeys(known: ["timeout", "allowed_hosts", "http_hosts"]).map { "unknown key \($0) (ignored)" }
        }
        if self.apnsVoipApp != nil, self.apnsApp == nil {
            // The VoIP app carries the PushKit half of a token pair whose first half goes to `apns_app`.
            warnings.append("\(section.keyPath("apns_voip_app")) is set without apns_app, the app whose devices it serves: it is never used")
        }
        warnings += section.unknownKeys(known: Self.knownKeys).map { "unknown key \($0) (ignored)" }
    }
}
