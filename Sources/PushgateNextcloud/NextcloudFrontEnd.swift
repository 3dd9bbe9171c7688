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
        let figures = NextcloudFigures()
        @Sendable func routes(_ settings: NextcloudSettings) -> [GatewayRoute] {
            let devices = NextcloudDeviceRoutes(
                store: store, router: NextcloudAppRouter(settings: settings), pathPrefix: settings.pathPrefix,
                identityProof: NextcloudIdentityProof(settings: settings.identityProof), logger: logger, figures: figures
            )
            return devices.routes + NextcloudNotificationRoutes(store: store, dispatcher: dispatcher, settings: settings, logger: logger, figures: figures).routes
        }
        // A reload replaces the handlers behind the same paths (`NextcloudSettings.reloaded(over:)`: all
        // but the path prefix change live).
        let live = LiveValue((settings: started, routes: routes(started)))
        let served = live.current.routes.enumerated().map { index, route in
            // The gateway's own refusals (a body over the limit, one that cannot be read) in Nextcloud's shape.
            GatewayRoute(route.method, route.path, maximumBodySize: route.maximumBodySize, errorAnswer: NextcloudErrorResponse.response) { request, context in
                try await live.current.routes[index].handler(request, context)
            }
        }
        return FrontEnd(name: Self.name, routes: served, figures: { live.current.settings.servesAnApp ? figures.figures : nil }) { configuration in
            let reloaded = configuration.nextcloud.reloaded(over: started)
            guard reloaded != live.current.settings else { return }
            live.replace((reloaded, routes(reloaded)))
        }
    }

    /// Every app the `nextcloud` section names must be configured under `apps`.
    /// - Throws: ``ConfigurationError`` naming the key that names an unknown app.
    public static func check(_ configuration: GatewayConfiguration) throws {
        let known = Set(configuration.apps.map(\.id))
        let settings = configuration.nextcloud
        var named: [(String, String?)] = [
            ("nextcloud.fcm_app", settings.fcmApp), ("nextcloud.apns_app", settings.apnsApp), ("nextcloud.apns_voip_app", settings.apnsVoipApp),
        ]
        for (index, route) in settings.routes.enumerated() {
            named += [("nextcloud.routes[\(index)].app", route.app), ("nextcloud.routes[\(index)].voip_app", route.voipApp)]
        }
        for case (let key, let app?) in named where !known.contains(app) {
            throw ConfigurationError(key: key, "names \(app), which is not configured under apps")
        }
    }
}
