import Foundation
import Logging
import PushgateAPNs
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateHTTP
import PushgateStore

// The operator console's part of the composition root.
extension Gateway {
    /// The operator console's routes, when it is on: as configured, or in the built-in sandbox (then open
    /// to loopback clients without a token, unless admin tokens are set).
    static func console(
        _ configuration: GatewayConfiguration, sandbox: Bool, apps: LiveValue<[ConsoleOverviewSource.App]>, credentials: CredentialWatch,
        store: BoundedStore, storeIsShared: Bool, dispatcher: Dispatcher, generation: LiveValue<Int>,
        backlog: (reading: OutboxBacklogReading, lifetime: Duration)? = nil,
        frontEndFigures: [String: @Sendable () async -> [FrontEndFigure]?] = [:], logger: Logger
    ) -> ConsoleRoutes? {
        let settings = configuration.console
        guard settings.enabled ?? (!settings.adminTokens.isEmpty || sandbox) else { return nil }
        var overview = ConsoleOverviewSource(
            store: store, apps: { apps.current }, credentials: { credentials.credentials }, failures: dispatcher.recentFailures, sandbox: sandbox,
            started: .now,
            instance: InstanceHeartbeat.processName, storeIsShared: storeIsShared, generation: { generation.current },
            state: { dispatcher.state(of: $0) }
        )
        overview.frontEnds = frontEndFigures
        overview.backlog = backlog
        if sandbox, settings.adminTokens.isEmpty {
            logger.notice(ConsoleRoutes.openNotice, metadata: ["path": "/console"])
        }
        return ConsoleRoutes(
            admins: LiveValue(ConsoleAdmins(settings.adminTokens)), sessions: ConsoleSessions(), limiter: ConsoleSignInLimiter(),
            sandbox: sandbox, trustForwardedProto: settings.trustForwardedProto, overview: overview,
            testPush: ConsoleTestPush(dispatcher: dispatcher, timeout: .seconds(20), logger: logger), logger: logger
        )
    }

    /// The configuration's apps as the console lists them: id, type, and the provider endpoint they use.
    static func consoleApps(_ configuration: GatewayConfiguration, sandbox: Bool) -> [ConsoleOverviewSource.App] {
        configuration.apps.map { app in
            let endpoint: String = if sandbox {
                "sandbox"
            } else if app.kind == .apns {
                // Read as the APNs back end reads it (case-insensitive, empty for production).
                APNsServer(setting: try? app.options.string("platform")) == .sandbox ? "sandbox" : "production"
            } else {
                "production"
            }
            return ConsoleOverviewSource.App(id: app.id, type: app.kind.rawValue, endpoint: endpoint)
        }
    }
}
