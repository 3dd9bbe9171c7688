public import PushgateConfig

/// Chooses which configured apps deliver to a registering device, from its User-Agent and the shape of
/// its push token, as the Nextcloud reference describes real clients.
public struct NextcloudAppRouter: Sendable {
    /// The apps for one device.
    public struct Choice: Sendable, Equatable {
        /// The app for the device's token (for a Talk iOS pair, its first, APNs half).
        public var app: String
        /// The app for the PushKit half of a Talk iOS token pair, if the device has one.
        public var voipApp: String?
    }

    private let settings: NextcloudSettings
    /// The configured APNs apps, when known: a route is taken only by tokens of its app's platform.
    private let apnsApps: Set<String>?

    /// Creates a router over the `nextcloud` settings.
    /// - Parameter apnsApps: the ids of the configured APNs apps. A route whose app is of the other
    ///   platform than a device's token is passed over for that device (`'Nextcloud-Talk'` matches Talk
    ///   Android's User-Agent as well as Talk iOS's): its first push would find the token invalid there,
    ///   and the device would be deleted and reported unknown to its server. Nil: every route is taken.
    public init(settings: NextcloudSettings, apnsApps: Set<String>? = nil) {
        self.settings = settings
        self.apnsApps = apnsApps
    }

    /// The apps for a device, or nil when none is configured for it.
    public func choose(userAgent: String, pushToken: String) -> Choice? {
        self.choose(userAgents: [userAgent], pushToken: pushToken)
    }

    /// The apps for a device that names itself in several places, tried in order against the routes
    /// (Android Files sends its User-Agent as the form field `http.useragent`, its header being its HTTP
    /// library's); nil when none is configured for it.
    public func choose(userAgents: [String], pushToken: String) -> Choice? {
        let isAPNs = Self.isAPNsToken(pushToken)
        let hasVoIPToken = isAPNs && pushToken.contains(" ")
        for userAgent in userAgents {
            for route in self.settings.routes {
                if let apnsApps = self.apnsApps, apnsApps.contains(route.app) != isAPNs { continue }
                if let regex = try? Regex(route.userAgentPattern), userAgent.contains(regex) {
                    return Choice(app: route.app, voipApp: hasVoIPToken ? route.voipApp : nil)
                }
            }
        }
        if isAPNs {
            return self.settings.apnsApp.map { Choice(app: $0, voipApp: hasVoIPToken ? self.settings.apnsVoipApp : nil) }
        }
        return self.settings.fcmApp.map { Choice(app: $0, voipApp: nil) }
    }

    /// An APNs token is hex; Talk iOS sends two hex tokens joined by one space.
    static func isAPNsToken(_ token: String) -> Bool {
        let parts = token.split(separator: " ", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        return parts.allSatisfy { part in !part.isEmpty && part.count % 2 == 0 && part.allSatisfy(\.isHexDigit) }
    }
}
