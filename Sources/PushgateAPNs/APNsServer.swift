public import Foundation

/// Which APNs environment an app talks to: the `platform` setting.
public enum APNsServer: String, Sendable, Hashable {
    /// `api.push.apple.com`, for apps signed for distribution.
    case production
    /// `api.sandbox.push.apple.com`, for development builds.
    case sandbox

    /// Reads the `platform` setting: `production`, `prod` or empty for production, `sandbox` for the
    /// development environment; nil for anything else.
    public init?(setting: String?) {
        switch setting?.lowercased() {
        case nil, "", "production", "prod": self = .production
        case "sandbox": self = .sandbox
        default: return nil
        }
    }

    /// The environment's base URL.
    public var baseURL: URL {
        switch self {
        case .production: URL(string: "https://api.push.apple.com")!
        case .sandbox: URL(string: "https://api.sandbox.push.apple.com")!
        }
    }
}
