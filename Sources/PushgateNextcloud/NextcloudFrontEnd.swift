public import PushgateConfig
public import PushgateHTTP
import PushgateCore

/// The Nextcloud push proxy as one ``FrontEnd``: `/devices` and `/notifications` under
/// `nextcloud.path_prefix`.
public enum NextcloudFrontEnd {
    /// The front end's name in logs and in the outbox.
    public static let name = "nextcloud"

    /// Builds the front end from its environment.
    public static func make(_ environment: FrontEndEnvironment) -> FrontEnd {
        let started = environment.configuration.nextcloud
        let (store, dispatcher, logger) = (environment.store, environment.dispatcher, environment.logger)
        let figures = NextcloudFigures(store: store, logger: logger)
        @Sendable func apnsApps(_ configuration: GatewayConfiguration) -> Set<String> {
            Set(configuration.apps.filter { $0.kind == .apns }.map(\.id))
        }
        @Sendable func routes(_ settings: NextcloudSettings, _ apnsApps: Set<String>) -> [GatewayRoute] {
            let devices = NextcloudDeviceRoutes(
                store: store, router: NextcloudAppRouter(settings: settings, apnsApps: apnsApps), pathPrefix: settings.pathPrefix,
                identityProof: NextcloudIdentityProof(settings: settings.identityProof), logger: logger, figures: figures
            )
            return devices.routes + NextcloudNotificationRoutes(store: store, dispatcher: dispatcher, settings: settings, logger: logger, figures: figures).routes
        }
        // A reload replaces the handlers behind the same paths (`NextcloudSettings.reloaded(over:)`: all
        // but the path prefix change live).
        let startedAPNsApps = apnsApps(environment.configuration)
        let live = LiveValue((settings: started, apnsApps: startedAPNsApps, routes: routes(started, startedAPNsApps)))
        let served = live.current.routes.enumerated().map { index, route in
            // The gateway's own refusals (a body over the limit, one that cannot be read) in Nextcloud's shape.
            GatewayRoute(route.method, route.path, maximumBodySize: route.maximumBodySize, errorAnswer: NextcloudErrorResponse.response) { request, context in
                try await live.current.routes[index].handler(request, context)
            }
        }
        let shown: @Sendable () async -> [FrontEndFigure]? = { live.current.settings.servesAnApp ? await figures.figures() : nil }
        return FrontEnd(name: Self.name, routes: served, countWriters: [figures.counts.stored], figures: shown) { configuration in
            let reloaded = configuration.nextcloud.reloaded(over: started)
            let reloadedAPNsApps = apnsApps(configuration)
            guard reloaded != live.current.settings || reloadedAPNsApps != live.current.apnsApps else { return }
            live.replace((reloaded, reloadedAPNsApps, routes(reloaded, reloadedAPNsApps)))
        }
    }

    /// Every app the `nextcloud` section names must be configured under `apps`, and of a type its key can
    /// use: `fcm_app` an FCM app, `apns_app` and every `voip_app` APNs apps, a route's `app` either.
    /// - Throws: ``ConfigurationError`` naming the key that names an unknown app or one of another type.
    public static func check(_ configuration: GatewayConfiguration) throws {
        let kinds = Dictionary(configuration.apps.map { ($0.id, $0.kind) }, uniquingKeysWith: { first, _ in first })
        let settings = configuration.nextcloud
        let fcm: Set<AppSettings.Kind> = [.gcm]
        let apns: Set<AppSettings.Kind> = [.apns]
        var named: [(String, String?, Set<AppSettings.Kind>)] = [
            ("nextcloud.fcm_app", settings.fcmApp, fcm), ("nextcloud.apns_app", settings.apnsApp, apns),
            ("nextcloud.apns_voip_app", settings.apnsVoipApp, apns),
        ]
        for (index, route) in settings.routes.enumerated() {
            named += [("nextcloud.routes[\(index)].app", route.app, fcm.union(apns)), ("nextcloud.routes[\(index)].voip_app", route.voipApp, apns)]
        }
        for case (let key, let app?, let allowed) in named {
            guard let kind = kinds[app] else { throw ConfigurationError(key: key, "names \(app), which is not configured under apps") }
            guard allowed.contains(kind) else {
                let expected = allowed.map(\.rawValue).sorted().joined(separator: " or ")
                throw ConfigurationError(key: key, "names \(app), a \(kind.rawValue) app; expected a \(expected) app")
            }
        }
    }
}
