/// The `log` section. Sygnal's `log.setup` (a Python logging dictionary) is read only for its level.
public struct LogSettings: Sendable, Equatable {
    /// How log lines are written.
    public enum Format: String, Sendable, Equatable {
        /// One human-readable line per event.
        case text
        /// One JSON object per line.
        case json
    }

    /// The lowest level written: trace, debug, info, notice, warning, error or critical (`log.level`).
    public var level: String = "info"
    /// `log.format`: `text` (default) or `json`.
    public var format: Format = .text
    /// Take the client address from `X-Forwarded-For` in access logs (`log.access.x_forwarded_for`).
    public var accessUsesForwardedFor = false

    /// The defaults.
    public init() {}

    static let knownKeys: Set<String> = ["setup", "access", "level", "format"]
    static let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    init(_ section: ConfigSection, warnings: inout [String]) throws {
        if let setup = try section.section("setup"), let level = try Self.level(fromPythonSetup: setup) {
            self.level = level
        }
        if let level = try section.string("level") {
            guard let normalised = Self.normalise(level) else {
                throw ConfigurationError(key: section.keyPath("level"), "must be one of \(Self.levels.joined(separator: ", ")), found \(level)")
            }
            self.level = normalised
        }
        if let format = try section.string("format") {
            guard let value = Format(rawValue: format) else {
                throw ConfigurationError(key: section.keyPath("format"), "must be text or json, found \(format)")
            }
            self.format = value
        }
        if let access = try section.section("access") {
            self.accessUsesForwardedFor = try access.bool("x_forwarded_for") ?? false
            warnings += access.unknownKeys(known: ["x_forwarded_for"]).map { "unknown key \($0) (ignored)" }
        }
        warnings += section.unknownKeys(known: Self.knownKeys).map { "unknown key \($0) (ignored)" }
    }

    /// Maps Python and swift-log level names (any case; `WARN`, `FATAL` too) to swift-log's.
    static func normalise(_ name: String) -> String? {
        switch name.lowercased() {
        case "warn": "warning"
        case "fatal": "critical"
        case let level where Self.levels.contains(level): level
        default: nil
        }
    }

    /// The level of the `sygnal` logger, else the root logger, in a Python `dictConfig` dictionary.
    private static func level(fromPythonSetup setup: ConfigSection) throws -> String? {
        let sygnal = try setup.section("loggers")?.section("sygnal")?.string("level")
        let root = try setup.section("root")?.string("level")
        return (sygnal ?? root).flatMap(Self.normalise)
    }
}
