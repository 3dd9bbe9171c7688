import PushgateConfig

/// Which configured app delivers a notification: the one its `app` field names; for iOS, the APNs app
/// whose topic the notification's `topic` is (or extends with a suffix such as `.voip` or
/// `.push-type.liveactivity`); else the platform's default (`ios_app`, `android_app`, `huawei_app`). An iOS
/// notification's `production` or `development` picks the APNs environment, as gorush picks its client
/// (`production` first): the chosen app when it is of that environment, else the APNs app of that
/// environment whose topic the chosen app's (or else the notification's) topic is or extends; with none,
/// the notification is refused rather than sent to the other environment, whose answer would be an
/// invalid token. Apps are matched by their `topic` option (a certificate app that leaves it to the
/// certificate is not found this way).
struct GorushAppRouter: Sendable {
    /// Why no app can take a notification.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    private let defaults: [Int: String]
    private let kinds: [String: AppSettings.Kind]
    /// APNs apps by topic, longest topic first.
    private let apnsTopics: [(topic: String, appID: String)]
    /// Each APNs app's topic (empty when it has none) and whether it posts to the sandbox.
    private let apnsApps: [String: (topic: String, sandbox: Bool)]

    init(settings: GorushSettings, apps: [AppSettings]) {
        var defaults: [Int: String] = [:]
        defaults[GorushNotification.Platform.ios.rawValue] = settings.iosApp
        defaults[GorushNotification.Platform.android.rawValue] = settings.androidApp
        defaults[GorushNotification.Platform.huawei.rawValue] = settings.huaweiApp
        self.defaults = defaults
        self.kinds = Dictionary(apps.map { ($0.id, $0.kind) }, uniquingKeysWith: { first, _ in first })
        self.apnsTopics = apps.compactMap { app in
            guard app.kind == .apns, let topic = try? app.options.string("topic"), !topic.isEmpty else { return nil }
            return (topic, app.id)
        }.sorted { $0.topic.utf8.count > $1.topic.utf8.count }
        var apnsApps: [String: (topic: String, sandbox: Bool)] = [:]
        for app in apps where app.kind == .apns && apnsApps[app.id] == nil {
            let topic = (try? app.options.string("topic")) ?? nil
            let platform = (try? app.options.string("platform")) ?? nil
            apnsApps[app.id] = (topic ?? "", platform?.lowercased() == "sandbox")
        }
        self.apnsApps = apnsApps
    }

    /// Whether `notification` is served on `platform` (gorush drops the others, of platforms it does not
    /// serve, without counting them): the platform has a default app (`ios_app`, `android_app`,
    /// `huawei_app`), or the notification picks an app itself, by its `app` field or, for iOS, by a topic
    /// that is an APNs app's.
    func serves(_ notification: GorushNotification, on platform: GorushNotification.Platform) -> Bool {
        if self.defaults[platform.rawValue] != nil || !notification.app.isEmpty { return true }
        return platform == .ios && self.apnsApp(forTopic: notification.topic) != nil
    }

    /// The APNs app whose topic `topic` is, or extends with a suffix; with `sandbox`, only among the apps
    /// of that environment.
    private func apnsApp(forTopic topic: String, sandbox: Bool? = nil) -> String? {
        guard !topic.isEmpty else { return nil }
        return self.apnsTopics.first { candidate in
            (sandbox == nil || self.apnsApps[candidate.appID]?.sandbox == sandbox)
                && (topic == candidate.topic || topic.hasPrefix(candidate.topic + "."))
        }?.appID
    }

    /// The kind of app that delivers `platform`'s notifications.
    static func kind(of platform: GorushNotification.Platform) -> AppSettings.Kind {
        switch platform {
        case .ios: .apns
        case .android: .gcm
        case .huawei: .hms
        }
    }

    /// The app for a notification.
    func app(for notification: GorushNotification, platform: GorushNotification.Platform) -> Result<String, Refusal> {
        let kind = Self.kind(of: platform)
        if !notification.app.isEmpty {
            guard let found = self.kinds[notification.app], found == kind else {
                return .failure(Refusal(reason: "app \(notification.app) is not a configured \(platform.name) app"))
            }
            return self.environment(of: notification.app, for: notification, platform: platform)
        }
        if platform == .ios, let app = self.apnsApp(forTopic: notification.topic) {
            return self.environment(of: app, for: notification, platform: platform)
        }
        guard let app = self.defaults[platform.rawValue] else {
            return .failure(Refusal(reason: "no \(platform.name) app is configured"))
        }
        return self.environment(of: app, for: notification, platform: platform)
    }

    /// `app`, or for an iOS notification that asks for the other APNs environment, the app of that
    /// environment with the same topic.
    private func environment(of app: String, for notification: GorushNotification, platform: GorushNotification.Platform) -> Result<String, Refusal> {
        guard platform == .ios, notification.production || notification.development, let chosen = self.apnsApps[app] else { return .success(app) }
        let sandbox = !notification.production
        guard chosen.sandbox != sandbox else { return .success(app) }
        let environment = sandbox ? "sandbox" : "production"
        // The chosen app's topic first, then the notification's; the longest topic that is or begins it, as
        // for routing by topic (so a `.voip` app of one environment finds the other's `.voip` app, or else
        // its bundle's app).
        for topic in [chosen.topic, notification.topic] {
            if let twin = self.apnsApp(forTopic: topic, sandbox: sandbox) { return .success(twin) }
        }
        return .failure(Refusal(reason: "no \(environment) APNs app is configured for \(chosen.topic.isEmpty ? "app \(app)" : "topic \(chosen.topic)")"))
    }
}
