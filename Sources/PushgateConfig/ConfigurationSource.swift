/// Where the configuration comes from: `--config`, else `PUSHGATE_CONFIG`, else `SYGNAL_CONF` (so a Sygnal
/// deployment keeps working unchanged), else the embedded defaults.
public enum ConfigurationSource: Sendable, Equatable {
    /// A file, and what named it.
    case file(path: String, origin: String)
    /// No file: the embedded defaults.
    case defaults

    /// Picks the source from the command line option and the environment.
    /// - Parameters:
    ///   - option: the `--config` value, if given.
    ///   - environment: the process environment.
    public static func resolve(option: String?, environment: [String: String]) -> ConfigurationSource {
        if let option, !option.isEmpty { return .file(path: option, origin: "--config") }
        for variable in ["PUSHGATE_CONFIG", "SYGNAL_CONF"] {
            if let path = environment[variable], !path.isEmpty { return .file(path: path, origin: variable) }
        }
        return .defaults
    }

    /// Loads the configuration from this source.
    /// - Throws: ``ConfigurationError`` when the file cannot be read or used.
    public func load() throws -> GatewayConfiguration {
        switch self {
        case .defaults: GatewayConfiguration()
        case .file(let path, _): try GatewayConfiguration(contentsOfFile: path)
        }
    }

    /// Says where the configuration came from, for logs.
    public var displayDescription: String {
        switch self {
        case .defaults: "embedded defaults"
        case .file(let path, let origin): "\(path) (from \(origin))"
        }
    }
}
