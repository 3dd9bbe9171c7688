import PushgateConfig

/// Which configured app delivers a notification: the one its `app` field names; for iOS, the APNs app
/// whose topic the notification's `topic` is (or extends with a suffix such as `.voip` or
/// `.push-type.liveactivity`); else the platform's default (`ios_app`, `android_app`, `huawei_app`).
struct GorushAppRouter: Sendable {
    /// Why no app can take a notification.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    private let defaults: [Int: String]
    private let kinds: [String: AppSettings.Kind]
    /// APNs apps by topic, longest topic first.
    private let apnsTopics: [(topic: String, appID: String)]

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
    }

    /// Whether `notification` is served on `platform` (gorush drops the others, of platforms it does not
    /// serve, without counting them): the platform has a default app (`ios_app`, `android_app`,
    /// `huawei_app`), or the notification picks an app itself, by its `app` field or, for iOS, by a topic
    /// that is an APNs app's.
    func serves(_ notification: GorushNotification, on platform: GorushNotification.Platform) -> Bool {
        if self.defaults[platform.rawValue] != nil || !notification.app.isEmpty { return true }
        return platform == .ios && self.apnsApp(forTopic: notification.topic) != nil
    }

    /// The APNs app whose topic `topic` is, or extends with a suffix.
    private func apnsApp(forTopic topic: String) -> String? {
        guard !topic.isEmpty else { return nil }
        return self.apnsTopics.first(where: { topic == $0.topic || topic.hasPrefix($0.topic + ".") })?.appID
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
            return .success(notification.app)
        }
        if platform == .ios, let app = self.apnsApp(forTopic: notification.topic) {
            return .success(app)
        }
        guard let app = self.defaults[platform.rawValue] else {
            return .failure(Refusal(reason: "no \(platform.name) app is configured"))
        }
        return .success(app)
    }
}
