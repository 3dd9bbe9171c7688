/// The `console` section: the operator console under `/console` on the gateway's listener.
///
/// ```yaml
/// console:
///   enabled: true                     # default: on when admin_tokens is set, off otherwise
///   admin_tokens:
///     - 'a-long-random-secret'        # may act (test pushes)
///     - {token: 'another-secret', read_only: true}
///   trust_forwarded_proto: false      # mark the session cookie Secure when X-Forwarded-Proto is https
/// ```
///
/// The tokens are secrets: ``description`` never shows them.
public struct ConsoleSettings: Sendable, Equatable, CustomStringConvertible {
    /// One admin token.
    public struct AdminToken: Sendable, Equatable {
        /// The secret.
        public var token: String
        /// Whether it may only look (no test push).
        public var readOnly: Bool

        /// Creates a token.
        public init(token: String, readOnly: Bool = false) {
            self.token = token
            self.readOnly = readOnly
        }
    }

    /// `enabled` as written; nil when absent.
    public var enabled: Bool?
    /// The admin tokens.
    public var adminTokens: [AdminToken] = []
    /// Whether `X-Forwarded-Proto: https` from the client counts as TLS (a TLS-terminating proxy in front).
    public var trustForwardedProto = false

    /// Whether the console is served: `enabled`, else whether admin tokens are set.
    public var isEnabled: Bool { self.enabled ?? !self.adminTokens.isEmpty }

    /// The defaults: off.
    public init() {}

    /// The shortest admin token accepted.
    public static let minimumTokenLength = 16

    static let knownKeys: Set<String> = ["enabled", "admin_tokens", "trust_forwarded_proto"]

    init(_ section: ConfigSection, warnings: inout [String]) throws {
        self.enabled = try section.bool("enabled")
        self.trustForwardedProto = try section.bool("trust_forwarded_proto") ?? false
        self.adminTokens = try Self.adminTokens(section)
        if self.enabled == true, self.adminTokens.isEmpty {
            throw ConfigurationError(key: section.keyPath("admin_tokens"), "the console is enabled but no admin token is set")
        }
        warnings += section.unknownKeys(known: Self.knownKeys).map { "unknown key \($0) (ignored)" }
    }

    private static func adminTokens(_ section: ConfigSection) throws -> [AdminToken] {
        let key = section.keyPath("admin_tokens")
        let items: [ConfigValue]
        switch section.map["admin_tokens"] {
        case nil, .null?: return []
        case .list(let list)?: items = list
        case let value?: throw ConfigurationError(key: key, "expected a list of tokens, found \(value.typeName)")
        }
        return try items.enumerated().map { index, item in
            let path = "\(key)[\(index)]"
            let token: AdminToken
            switch item {
            case .string(let text):
                token = AdminToken(token: text)
            case .map(let map):
                let entry = ConfigSection(path: path, map: map)
                guard let text = try entry.string("token") else { throw ConfigurationError(key: path, "needs a token") }
                token = AdminToken(token: text, readOnly: try entry.bool("read_only") ?? false)
                if let unknown = entry.unknownKeys(known: ["token", "read_only"]).first {
                    throw ConfigurationError(key: unknown, "is not a key of an admin token (token, read_only)")
                }
            default:
                throw ConfigurationError(key: path, "expected a token or {token, read_only}, found \(item.typeName)")
            }
            // The message names the entry, never the token.
            guard token.token.utf8.count >= Self.minimumTokenLength, !token.token.contains(where: \.isWhitespace) else {
                throw ConfigurationError(key: path, "an admin token must be at least \(Self.minimumTokenLength) characters, without spaces")
            }
            return token
        }
    }

    public var description: String {
        let readOnly = self.adminTokens.filter(\.readOnly).count
        return "console: \(self.isEnabled ? "on" : "off"), \(self.adminTokens.count) admin tokens (\(readOnly) read-only)"
    }
}
