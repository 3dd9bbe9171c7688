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

    /// No apps: the proxy refuses registrations until some are named.
    public init() {}

    static let knownKeys: Set<String> = ["path_prefix", "fcm_app", "apns_app", "apns_voip_app", "routes"]

    init(_ section: ConfigSection, warnings: inout [String]) throws {
        var prefix = try section.string("path_prefix") ?? ""
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty, !prefix.hasPrefix("/") { prefix = "/" + prefix }
        self.pathPrefix = prefix
        self.fcmApp = try section.string("fcm_app")
        self.apnsApp = try section.string("apns_app")
        self.apnsVoipApp = try section.string("apns_voip_app")
        if case .list(let items)? = section.map["routes"] {
            self.routes = try items.enumerated().map { index, item in
                let key = "\(section.keyPath("routes"))[\(index)]"
                guard case .map(let map) = item else { throw ConfigurationError(key: key, "expected a mapping with user_agent and app") }
                let route = ConfigSection(path: key, map: map)
                guard let pattern = try route.string("user_agent"), let app = try route.string("app") else {
                    throw ConfigurationError(key: key, "needs user_agent (a regular expression) and app")
                }
                guard (try? Regex(pattern)) != nil else { throw ConfigurationError(key: route.keyPath("user_agent"), "is not a valid regular expression") }
                return Route(userAgentPattern: pattern, app: app, voipApp: try route.string("voip_app"))
            }
        } else if let value = section.map["routes"], value != .null {
            throw ConfigurationError(key: section.keyPath("routes"), "expected a list, found \(value.typeName)")
        }
        warnings += section.unknownKeys(known: Self.knownKeys).map { "unknown key \($0) (ignored)" }
    }
}
