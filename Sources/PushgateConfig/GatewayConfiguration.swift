import Foundation
import PushgateCore

/// Pushgate's whole configuration: a superset of Sygnal's `sygnal.yaml`.
///
/// ```yaml
/// http: {bind_addresses: ['127.0.0.1'], port: 5000}
/// database: {url: 'postgres://pushgate:secret@db:5432/pushgate'}
/// apps:
///   im.example.ios: {type: apns, keyfile: AuthKey.p8, key_id: ABC123, team_id: TEAM123, topic: im.example.ios}
/// ```
///
/// Unknown keys produce ``warnings``; a key of the wrong type or value throws ``ConfigurationError``.
public struct GatewayConfiguration: Sendable, Equatable {
    public var http = HTTPSettings()
    public var log = LogSettings()
    public var metrics = MetricsSettings()
    /// The outbound HTTP proxy for provider requests (`proxy`; Sygnal's form `http://[user:pass@]host[:port]`).
    public var proxy: String?
    public var database = DatabaseSettings.default
    /// How long one store call may take before it fails as unavailable (`database.timeout`, seconds,
    /// default 3).
    public var databaseTimeout: Duration = .seconds(3)
    /// The Nextcloud push proxy front end (`nextcloud`).
    public var nextcloud = NextcloudSettings()
    /// The gorush-compatible front end (`gorush`); nil when the section is absent (the front end is off).
    public var gorush: GorushSettings?
    /// The Status push notification server front end (`status`); nil when the section is absent (off).
    public var status: StatusSettings?
    /// The operator console (`console`); off by default.
    public var console = ConsoleSettings()
    /// The configured apps, in file order.
    public var apps: [AppSettings] = []
    /// Keys that were ignored, and why, for the operator.
    public var warnings: [String] = []

    /// The embedded defaults, used when no file is given.
    public init() {}

    /// Top-level sections Pushgate reads.
    static let knownSections: Set<String> = ["http", "log", "metrics", "proxy", "apps", "database", "nextcloud", "gorush", "status", "console"]

    /// Parses configuration text.
    /// - Throws: ``ConfigurationError`` naming the first key that cannot be used.
    public init(yaml: String) throws {
        let root: ConfigMap
        switch try YAMLConfigLoader.load(yaml: yaml) {
        case .map(let map): root = map
        case .null: root = ConfigMap()
        case let value: throw ConfigurationError(key: "", "the file must hold a mapping, found \(value.typeName)")
        }
        let top = ConfigSection(path: "", map: root)
        var warnings: [String] = []
        if let http = try top.section("http") {
            self.http = try HTTPSettings(http)
            warnings += http.unknownKeys(known: HTTPSettings.knownKeys).map { "unknown key \($0) (ignored)" }
        }
        if let log = try top.section("log") { self.log = try LogSettings(log, warnings: &warnings) }
        if let metrics = try top.section("metrics") { self.metrics = try MetricsSettings(metrics, warnings: &warnings) }
        if let proxy = try top.string("proxy") { self.proxy = try Self.validatedProxy(proxy) }
        if let database = try top.section("database") {
            self.database = try DatabaseSettings(database, warnings: &warnings)
            self.databaseTimeout = .seconds(try database.int("timeout", in: 1...300) ?? 3)
        }
        if let nextcloud = try top.section("nextcloud") { self.nextcloud = try NextcloudSettings(nextcloud, warnings: &warnings) }
        if let gorush = try top.section("gorush") { self.gorush = try GorushSettings(gorush, warnings: &warnings) }
        if let status = try top.section("status") { self.status = try StatusSettings(status, warnings: &warnings) }
        if let console = try top.section("console") { self.console = try ConsoleSettings(console, warnings: &warnings) }
        if let apps = try top.section("apps") {
            self.apps = try apps.map.entries.map { id, value in
                guard case .map(let map) = value else {
                    throw ConfigurationError(key: apps.keyPath(id), "expected a mapping with a type, found \(value.typeName)")
                }
                return try AppSettings(id: id, section: ConfigSection(path: apps.keyPath(id), map: map))
            }
        }
        warnings += Self.overlappingGlobs(self.apps.map(\.id))
        if root["db"] != nil { warnings.append("db: Sygnal's legacy database section is ignored") }
        warnings += top.unknownKeys(known: Self.knownSections.union(["db"])).map { "unknown section \($0) (ignored)" }
        self.warnings = warnings
    }

    /// Reads and parses a configuration file.
    /// - Throws: ``ConfigurationError`` when the file cannot be read or used.
    public init(contentsOfFile path: String) throws {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(key: "", "cannot read the configuration file \(path): \(error.localizedDescription)")
        }
        try self.init(yaml: text)
    }

    /// A warning for each pair of app globs that some app id matches both of (the catch-all `*` aside, which
    /// takes only what no other app claims): such ids are ambiguous, and their pushkeys are rejected.
    static func overlappingGlobs(_ ids: [String]) -> [String] {
        let globs = ids.filter { $0 != "*" }.map(AppPattern.init).filter(\.isGlob)
        var warnings: [String] = []
        for (index, first) in globs.enumerated() {
            for second in globs[(index + 1)...] where first.overlaps(second) {
                warnings.append(
                    "apps: \(first.text) and \(second.text) both match some app ids, which are then ambiguous and their pushkeys rejected; make the globs disjoint or configure those ids exactly"
                )
            }
        }
        return warnings
    }

    private static func validatedProxy(_ proxy: String) throws -> String {
        guard let components = URLComponents(string: proxy), components.scheme == "http",
            let host = components.encodedHost, !host.isEmpty
        else {
            throw ConfigurationError(key: "proxy", "must be an http:// URL, as in http://user:password@proxy.example:8080")
        }
        return proxy
    }
}
