/// The `metrics` section, as Sygnal reads it. `/metrics` on the main listener is always served; when
/// `metrics.prometheus.enabled` is true a second listener serves it where Sygnal's did.
public struct MetricsSettings: Sendable, Equatable {
    /// Serve Prometheus metrics on a listener of their own (`metrics.prometheus.enabled`, default false).
    public var prometheusListenerEnabled = false
    /// That listener's address (`metrics.prometheus.address`, default 127.0.0.1).
    public var prometheusAddress = "127.0.0.1"
    /// That listener's port (`metrics.prometheus.port`, default 8000).
    public var prometheusPort = 8000

    /// The defaults.
    public init() {}

    static let knownKeys: Set<String> = ["prometheus", "opentracing", "sentry"]

    init(_ section: ConfigSection, warnings: inout [String]) throws {
        if let prometheus = try section.section("prometheus") {
            self.prometheusListenerEnabled = try prometheus.bool("enabled") ?? false
            self.prometheusAddress = try prometheus.string("address") ?? self.prometheusAddress
            self.prometheusPort = try prometheus.int("port", in: 0...65535) ?? self.prometheusPort
            warnings += prometheus.unknownKeys(known: ["enabled", "address", "port"]).map { "unknown key \($0) (ignored)" }
        }
        for name in ["opentracing", "sentry"] {
            if let integration = try section.section(name), try integration.bool("enabled") == true {
                warnings.append("\(integration.keyPath("enabled")): \(name) is not supported by Pushgate (ignored)")
            }
        }
        warnings += section.unknownKeys(known: Self.knownKeys).map { "unknown key \($0) (ignored)" }
    }
}
