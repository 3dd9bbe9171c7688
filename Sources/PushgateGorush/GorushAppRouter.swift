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

    /// Whether notifications for `platform` are served (gorush drops the others without counting them).
    func serves(_ platform: Int) -> Bool {
        self.defaults[platform] != nil
    }

    /// The app for a notification.
    func app(for notification: GorushNotification, platform: GorushNotification.Platform) -> Result<String, Refusal> {
        let kind: AppSettings.Kind? = switch platform {
        case .ios: .apns
        case .android: .gcm
        case .huawei: .hms
        }
        if !notification.app.isEmpty {
            guard let found = self.kinds[notification.app], found == kind else {
                return .failure(Refusal(reason: "app \(notification.app) is not a configured \(platform.name) app"))
            }
            return .success(notification.app)
        }
        if platform == .ios, !notification.topic.isEmpty,
            let match = self.apnsTopics.first(where: { notification.topic == $0.topic || notification.topic.hasPrefix($0.topic + ".") })
        {
            return .success(match.appID)
        }
        guard let app = self.defaults[platform.rawValue] else {
            return .failure(Refusal(reason: "no \(platform.name) app is configured"))
        }
        return .success(app)
    }
}
