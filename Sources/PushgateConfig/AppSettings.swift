/// One entry of `apps`: an app id (or glob) and its delivery settings, as in Sygnal's configuration.
public struct AppSettings: Sendable, Equatable {
    /// The delivery back end an app uses.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// Apple Push Notification service.
        case apns
        /// Firebase Cloud Messaging (`gcm` in Sygnal's configuration).
        case gcm
        /// Web Push.
        case webpush
        /// Huawei Push Kit.
        case hms
        /// UnifiedPush endpoints (a Matrix pusher's pushkey is the endpoint URL).
        case unifiedpush
    }

    /// The app id or glob (`*` and `?`) as written under `apps`.
    public var id: String
    /// The `type` key.
    public var kind: Kind
    /// Every key of the app, `type` included, for its back end to read.
    public var options: ConfigSection

    init(id: String, section: ConfigSection) throws {
        guard let type = try section.string("type") else {
            throw ConfigurationError(key: section.keyPath("type"), "is required (apns, gcm, webpush, hms or unifiedpush)")
        }
        guard let kind = Kind(rawValue: type) else {
            throw ConfigurationError(
                key: section.keyPath("type"),
                "must be apns, gcm, webpush, hms or unifiedpush, found \(type) (Sygnal's Python pushkin classes cannot be loaded by Pushgate)"
            )
        }
        self.id = id
        self.kind = kind
        self.options = section
    }

    public static func == (lhs: AppSettings, rhs: AppSettings) -> Bool {
        lhs.id == rhs.id && lhs.kind == rhs.kind && lhs.options.map == rhs.options.map
    }
}
