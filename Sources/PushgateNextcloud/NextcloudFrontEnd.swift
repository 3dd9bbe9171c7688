public import PushgateConfig
public import PushgateHTTP

/// The Nextcloud push proxy as one ``FrontEnd``: `/devices` and `/notifications` under
/// `nextcloud.path_prefix`.
public enum NextcloudFrontEnd {
    /// The front end's name in logs and in the outbox.
    public static let name = "nextcloud"

    /// Builds the front end from its environment.
    public static func make(_ environment: FrontEndEnvironment) -> FrontEnd {
        let settings = environment.configuration.nextcloud
        let devices = NextcloudDeviceRoutes(
            store: environment.store, router: NextcloudAppRouter(settings: settings), pathPrefix: settings.pathPrefix,
            identityProof: NextcloudIdentityProof(settings: settings.identityProof), logger: environment.logger
        )
        let notifications = NextcloudNotificationRoutes(
            store: environment.store, dispatcher: environment.dispatcher, settings: settings, logger: environment.logger
        )
        return FrontEnd(name: Self.name, routes: devices.routes + notifications.routes)
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
