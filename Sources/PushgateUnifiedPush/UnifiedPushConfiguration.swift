public import PushgateConfig
public import PushgateProviderSupport

/// The settings of one `type: unifiedpush` app.
///
/// | Key | Default |
/// |---|---|
/// | `allowed_endpoints` | unset: any public https endpoint; globs matched against `host[:port]`, as Web Push's |
/// | `ttl` | 86400 seconds (the `TTL` header when the notification states none; common-proxies sends a day) |
/// | `request_timeout` | 10 seconds: the longest one request to a push server may take |
/// | `max_connections` | 64: requests in flight at once, over every push server |
/// | `inflight_request_limit` | 512 |
public struct UnifiedPushConfiguration: Sendable, CustomStringConvertible {
    /// The keys this back end reads.
    public static let knownKeys: Set<String> = [
        "type", "allowed_endpoints", "ttl", "request_timeout", "max_connections", "inflight_request_limit",
    ]

    /// The app id (or glob) of the configured app.
    public var appID: String
    /// Globs of `host[:port]` that may be used (and may be private or plain `http`); nil allows any public
    /// https endpoint.
    public var allowedEndpoints: [String]?
    /// The `TTL` header when the notification does not state one, in seconds.
    public var ttl: Int
    /// The longest one request to a push server may take.
    public var requestTimeout: Duration
    /// Requests in flight at once.
    public var maxConnections: Int
    /// Deliveries waiting or in flight at once; beyond it deliveries are answered `retryLater`.
    public var inflightRequestLimit: Int
    /// Keys present in the app's section that this back end does not read, as dotted paths, for a warning.
    public var unknownKeys: [String]
    /// The HTTP proxy requests go through (the global `proxy` key, else `HTTPS_PROXY`), set by the gateway.
    public var proxy: OutboundProxy? = nil

    /// Reads an app's settings.
    /// - Throws: ``ConfigurationError`` naming the key at fault.
    public init(settings: AppSettings) throws {
        let section = settings.options
        self.appID = settings.id
        self.allowedEndpoints = try section.hostGlobs("allowed_endpoints")
        self.ttl = try section.int("ttl", in: 0...2_419_200) ?? 86_400
        self.requestTimeout = .milliseconds(Int64(((try section.seconds("request_timeout", in: 0.1...60)) ?? 10) * 1000))
        self.maxConnections = try section.int("max_connections", in: 1...10_000) ?? 64
        self.inflightRequestLimit = try section.int("inflight_request_limit", in: 1...1_000_000) ?? 512
        self.unknownKeys = section.unknownKeys(known: Self.knownKeys)
    }

    /// Settings given directly (tests, the sandbox).
    public init(
        appID: String, allowedEndpoints: [String]? = nil, ttl: Int = 86_400, requestTimeout: Duration = .seconds(10), maxConnections: Int = 64,
        inflightRequestLimit: Int = 512
    ) {
        self.appID = appID
        self.allowedEndpoints = allowedEndpoints
        self.ttl = ttl
        self.requestTimeout = requestTimeout
        self.maxConnections = maxConnections
        self.inflightRequestLimit = inflightRequestLimit
        self.unknownKeys = []
    }

    /// A summary (the globs are counted, not listed).
    public var description: String {
        "UnifiedPushConfiguration(app: \(self.appID), ttl: \(self.ttl), request_timeout: \(self.requestTimeout), "
            + "max_connections: \(self.maxConnections), inflight_request_limit: \(self.inflightRequestLimit), "
            + "allowed_endpoints: \(self.allowedEndpoints.map { "\($0.count) globs" } ?? "any public")"
    }
}
