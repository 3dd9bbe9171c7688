public import Logging
public import PushgateConfig
public import PushgateCore
import ServiceLifecycle

/// Sends one notification through one configured app, outside a running gateway (`pushgate send`).
public enum OneShotSender {
    /// Builds the app's back end, delivers, and shuts the back end down.
    /// - Parameters:
    ///   - appID: the app id as configured (exact).
    ///   - configuration: the loaded configuration.
    ///   - build: turns the platform into the provider-ready notification.
    /// - Throws: ``ConfigurationError`` when the app is not configured or its settings are unusable.
    public static func send(
        appID: String,
        token: String,
        configuration: GatewayConfiguration,
        timeout: Duration = .seconds(30),
        logger: Logger,
        build: @Sendable (Platform) throws -> PushNotification
    ) async throws -> DeliveryOutcome {
        guard let app = configuration.apps.first(where: { $0.id == appID }) else {
            let known = configuration.apps.map(\.id).joined(separator: ", ")
            throw ConfigurationError(key: "apps", "no app \(appID) is configured (configured: \(known.isEmpty ? "none" : known))")
        }
        let backEnd = try ProviderFactory.build(try ProviderFactory.configure(app, proxy: Gateway.outboundProxy(configuration)), logger: logger)
        let notification = try build(backEnd.provider.platform)
        let group = ServiceGroup(services: [backEnd.service], logger: logger)
        return try await withThrowingTaskGroup(of: DeliveryOutcome?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            let outcome = await backEnd.provider.deliver(notification, to: token, deadline: .now + timeout)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return outcome
        }
    }
}
