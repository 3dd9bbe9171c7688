public import PushgateConfig
import PushgateCore
public import PushgateHTTP

/// The Matrix Push Gateway API as one ``FrontEnd``: always on, as it is Sygnal's only protocol.
public enum MatrixFrontEnd {
    /// The front end's name in logs and in the outbox.
    public static let name = "matrix"

    /// Builds the front end from its environment.
    /// - Throws: ``ConfigurationError`` when an app's Matrix payload keys have the wrong type.
    public static func make(_ environment: FrontEndEnvironment) throws -> FrontEnd {
        let metrics = MatrixMetrics(factory: environment.metricsFactory, store: environment.store, logger: environment.logger)
        let handler = MatrixNotifyHandler(
            dispatcher: environment.dispatcher, apps: try Self.appOptions(environment.configuration.apps), store: environment.store,
            storeIsShared: environment.storeIsShared, metrics: metrics, logger: environment.logger,
            unifiedPushDiscovery: Self.answersDiscovery(environment.configuration.apps)
        )
        return FrontEnd(name: Self.name, routes: handler.routes, countWriters: [metrics.consoleCounts.stored], figures: { await metrics.figures() }) {
            configuration in
            handler.replaceApps(try Self.appOptions(configuration.apps), unifiedPushDiscovery: Self.answersDiscovery(configuration.apps))
        }
    }

    /// Whether `GET` on the endpoint answers UnifiedPush's gateway discovery: with a `unifiedpush` app.
    static func answersDiscovery(_ apps: [AppSettings]) -> Bool {
        apps.contains { $0.kind == .unifiedpush }
    }

    /// The Matrix options of every app (Sygnal's `send_badge_counts`, `convert_device_token_to_hex`, and
    /// the APNs `push_type` and FCM `fcm_options` that Sygnal applies to every notification of the app;
    /// their back ends check them, and other front ends' notifications go without them).
    /// - Throws: ``ConfigurationError`` naming a key of the wrong type.
    public static func appOptions(_ apps: [AppSettings]) throws -> [String: MatrixAppOptions] {
        var options: [String: MatrixAppOptions] = [:]
        for app in apps {
            var appOptions = MatrixAppOptions(
                sendBadgeCounts: try app.options.bool("send_badge_counts") ?? true,
                convertDeviceTokenToHex: try app.options.bool("convert_device_token_to_hex") ?? true
            )
            switch app.kind {
            case .apns:
                if let pushType = try app.options.string("push_type"), !pushType.isEmpty { appOptions.apnsPushType = pushType }
            case .gcm:
                if let section = try app.options.section("fcm_options"), case .object(let members) = JSONValue(section.map) {
                    appOptions.fcmOptions = members
                }
            default:
                break
            }
            options[app.id] = appOptions
        }
        return options
    }
}
