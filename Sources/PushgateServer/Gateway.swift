import Hummingbird
import HummingbirdCore
import NIOPosix
import PushgateHTTP
public import Logging
public import PushgateConfig
public import PushgateCore
public import PushgateDelivery
import Prometheus
import PushgateMatrix
import PushgateNextcloud
import PushgateGorush
import PushgateStatus
import PushgateWaku
import AsyncHTTPClient
import PushgateWebhook
import PushgateProviderSupport
import PushgateSandbox
public import Foundation
public import PushgateStore
public import ServiceLifecycle
public import UnixSignals

/// The composition root: the one place that turns a configuration into concrete stores, routes and
/// listeners, and runs them as one service group.
///
/// ```swift
/// let gateway = try await Gateway.build(configuration: configuration, logger: logger)
/// try await gateway.run(gracefulShutdownSignals: [.sigterm, .sigint])
/// ```
public struct Gateway: Sendable {
    /// Called with each listener's address once it accepts connections.
    public typealias ListeningHandler = @Sendable (_ name: String, _ host: String, _ port: Int) async -> Void

    /// The store every front end uses.
    public let store: any PushStore
    /// The metrics registry `/metrics` renders.
    public let metrics: GatewayMetrics
    /// Delivers now or through the outbox; what front ends call.
    public let dispatcher: Dispatcher
    /// Everything long-lived, in start order (store first, listeners last; shutdown runs in reverse).
    public let services: [any Service]
    private let reconfiguration: GatewayReconfiguration
    /// See ``maximumGracefulShutdownDuration(for:)``.
    private let shutdownLimit: Duration
    private let logger: Logger

    /// Where a reload reads the configuration again: what `pushgate serve` was started with.
    public struct ReloadSource: Sendable {
        /// Reads and parses the configuration.
        public var load: @Sendable () throws -> GatewayConfiguration
        /// How the log names it (`/etc/pushgate.yaml`).
        public var description: String
        /// The `SIGHUP`s that ask for a reload, trapped as early as the caller could (a `SIGHUP` not
        /// trapped ends the process); nil: the gateway traps them when it starts.
        public var signals: UnixSignalsSequence?

        /// Creates a source.
        public init(description: String, signals: UnixSignalsSequence? = nil, load: @escaping @Sendable () throws -> GatewayConfiguration) {
            self.load = load
            self.description = description
            self.signals = signals
        }
    }

    /// Reads the configuration again and applies what changed, as `SIGHUP` does.
    /// - Returns: whether the reloaded configuration was valid (a failed reload changes nothing).
    @discardableResult
    public func reloadConfiguration() async -> Bool {
        await self.reconfiguration.reload() != .failed
    }

    /// Opens the store (running its migrations) and prepares the listeners.
    /// - Parameters:
    ///   - configuration: the loaded configuration.
    ///   - logger: the root logger.
    ///   - sandboxDirectory: where the built-in sandbox keeps its credentials when no app is configured.
    ///   - reloadSource: where `SIGHUP` reads the configuration again; nil: the gateway does not reload.
    ///   - onListening: told each listener's bound address (useful with port 0).
    /// - Throws: ``StoreError`` when the store cannot be opened.
    public static func build(
        configuration: GatewayConfiguration,
        logger: Logger,
        sandboxDirectory: URL = URL(fileURLWithPath: "pushgate-sandbox"),
        reloadSource: ReloadSource? = nil,
        onListening: @escaping ListeningHandler = { _, _, _ in }
    ) async throws -> Gateway {
        var configuration = configuration
        // With no apps, run the provider emulators in-process with one demo app each, so that a
        // newcomer sees deliveries work before holding any credentials.
        var sandbox: SandboxEnvironment?
        if configuration.apps.isEmpty {
            let environment = try SandboxEnvironment.prepare(directory: sandboxDirectory, logger: logger)
            configuration.apps = try GatewayConfiguration(yaml: environment.appsYAML).apps
            sandbox = environment
            if configuration.status == nil { configuration.status = Self.sandboxStatus(environment, directory: sandboxDirectory, logger: logger) }
            logger.notice(
                "no apps are configured: running the built-in sandbox",
                metadata: ["apps": "\(configuration.apps.map(\.id).joined(separator: ", "))", "credentials": "\(sandboxDirectory.path)"]
            )
        }
        // A configuration error must stop start-up before anything is opened.
        let configuredApps = try Self.validate(configuration)
        for warning in configuredApps.configurationWarnings { logger.warning("configuration: \(warning)") }
        let store = BoundedStore(try await StoreFactory.open(configuration.database, callTimeout: configuration.databaseTimeout, logger: logger), timeout: configuration.databaseTimeout)
        let metrics = GatewayMetrics()
        let metricsFactory = PrometheusMetricsFactory(registry: metrics.registry)
        let appBackEnds = try configuredApps.map { try ProviderFactory.build($0, logger: logger, metricsFactory: metricsFactory) }
        let webhooks = Self.webhooks(configuration, logger: logger)
        let backEnds = BackEndSet(services: (appBackEnds + webhooks).map(\.service), logger: logger)
        let deliveryMetrics = DeliveryMetrics(factory: metricsFactory)
        // The sandbox makes its credentials afresh at each start: nothing to watch (until a reload puts apps in its place).
        let credentialWatch = CredentialWatch(
            credentials: sandbox == nil ? configuredApps.flatMap(\.credentials) : [], registry: metrics.registry, logger: logger
        )
        deliveryMetrics.prepare(appIDs: configuration.apps.map(\.id))
        let wakeUp = OutboxWakeUp()
        let dispatcher = Dispatcher(
            directory: ProviderDirectory((appBackEnds + webhooks).map(\.provider)), inflightLimits: Self.inflightLimits(configuration),
            store: store, metrics: deliveryMetrics, wakeUp: wakeUp, logger: logger
        )
        let operations = OperationsRoutes(store: store, metrics: metrics, healthDeadline: .seconds(2))
        let storeIsShared: Bool
        switch configuration.database {
        case .sqlite: storeIsShared = false
        case .postgres: storeIsShared = true
        }
        var limits = ListenerLimits(configuration.http)
        // One cap for every listener's connections together.
        let connections = OpenConnections(limit: limits.maxConnections)
        let environment = FrontEndEnvironment(
            configuration: configuration, store: store, storeIsShared: storeIsShared, dispatcher: dispatcher,
            metricsFactory: metricsFactory, logger: logger, pollExecutor: EventLoopTaskExecutor.sharedGroup.first, connections: connections
        )
        // Every front end the gateway serves, each built from its own configuration section.
        var frontEnds = [
            FrontEnd(name: "operations", routes: operations.routes + OpenAPIRoute.routes),
            try MatrixFrontEnd.make(environment),
            NextcloudFrontEnd.make(environment),
        ]
        if let gorush = GorushFrontEnd.make(environment) { frontEnds.append(gorush) }
        if let status = configuration.status {
            let relay = WakuRESTClient(baseURL: status.wakuRESTURL, timeout: status.requestTimeout)
            if let frontEnd = try StatusFrontEnd.make(environment, relay: relay) { frontEnds.append(frontEnd) }
        }
        let generation = LiveValue(1)
        let backlogReading = OutboxBacklogReading()
        let consoleApps = LiveValue(Self.consoleApps(configuration, sandbox: sandbox != nil))
        if let console = Self.console(
            configuration, sandbox: sandbox != nil, apps: consoleApps, credentials: credentialWatch, store: store,
            storeIsShared: storeIsShared, dispatcher: dispatcher, generation: generation, backlog: (backlogReading, ConsoleRoutes.refreshInterval),
            frontEndFigures: Dictionary(frontEnds.compactMap { frontEnd in frontEnd.figures.map { (frontEnd.name, $0) } }, uniquingKeysWith: { first, _ in first }),
            logger: logger
        ) {
            let sandboxed = sandbox != nil
            frontEnds.append(
                FrontEnd(
                    name: "console", routes: console.routes,
                    reconfigure: { reloaded in
                        consoleApps.replace(Self.consoleApps(reloaded, sandbox: sandboxed))
                        console.replaceAdmins(reloaded.console.adminTokens)
                    }
                )
            )
        } else if configuration.gorush?.isServed == true {
            // Without the console, whose page `/` redirects to, gorush's welcome answers there.
            frontEnds.append(FrontEnd(name: "gorush welcome", routes: [GorushFrontEnd.welcomeRoute]))
        }
        if let log = sandbox?.log {
            frontEnds.append(FrontEnd(name: "sandbox", routes: [GatewayRoute(.get, "/sandbox/deliveries") { _, _ in SandboxEnvironment.deliveriesResponse(log) }]))
        }
        let responder = GatewayRouterBuilder.responder(
            routes: frontEnds.flatMap(\.routes),
            metrics: metrics,
            maxRequestBodySize: configuration.http.maxRequestBodySize,
            accessLogUsesForwardedFor: configuration.log.accessUsesForwardedFor
        )
        var workerConfiguration = OutboxWorker.Configuration()
        workerConfiguration.executors = EventLoopTaskExecutor.sharedGroup
        let worker = OutboxWorker(
            dispatcher: dispatcher, store: store, metrics: deliveryMetrics, wakeUp: wakeUp, configuration: workerConfiguration,
            observers: frontEnds.compactMap(\.outcomeObserver), logger: logger
        )
        let sweeper = ExpiredCounterSweeper(store: store, logger: logger)
        let backlogSampler = OutboxBacklogSampler(store: store, metrics: deliveryMetrics, reading: backlogReading, logger: logger)
        var running: [String: GatewayReconfiguration.RunningApp] = [:]
        for (app, (built, group)) in zip(configuration.apps, zip(appBackEnds, backEnds.initialGroups)) where running[app.id] == nil {
            running[app.id] = GatewayReconfiguration.RunningApp(provider: built.provider, group: group, fingerprint: AppFingerprint(app))
        }
        let started = configuration
        let load: GatewayReconfiguration.Load = reloadSource?.load ?? { @Sendable in started }
        let reconfiguration = GatewayReconfiguration(
            configuration: configuration, apps: running, fixedProviders: webhooks.map(\.provider), load: load,
            sourceDescription: reloadSource?.description ?? "the configuration given at start", sandboxApps: sandbox == nil ? nil : configuration.apps,
            backEnds: backEnds, dispatcher: dispatcher, deliveryMetrics: deliveryMetrics, frontEnds: frontEnds.compactMap(\.reconfigure),
            credentialWatch: credentialWatch, metricsFactory: metricsFactory, liveGeneration: generation, logger: logger
        )
        // A group stops its services in the reverse order: the listeners, the front ends' services, the
        // outbox worker (whose last deliveries are still counted), then what writes the counts, the store last.
        var services: [any Service] = try (sandbox?.services() ?? []) + [store]
            + frontEnds.flatMap(\.countWriters) + [DeliveryCountFlusher(tally: dispatcher.tally, store: store, logger: logger)]
            + [backEnds, worker, sweeper, backlogSampler, credentialWatch]
            + frontEnds.flatMap(\.services)
        if storeIsShared {
            // Every instance on a shared store says it is there, for the consoles' lists of instances.
            services.append(InstanceHeartbeat(store: store, name: InstanceHeartbeat.processName, started: Date(), logger: logger))
        }
        if let reloadSource {
            services.append(ConfigurationReloader(reconfiguration: reconfiguration, signals: reloadSource.signals, logger: logger))
        }
        limits.bodyLimits = GatewayRouterBuilder.bodyLimits(routes: frontEnds.flatMap(\.routes), maxRequestBodySize: configuration.http.maxRequestBodySize)
        for address in configuration.http.bindAddresses {
            services.append(
                Self.listener(
                    name: "http", responder: responder, limits: limits, connections: connections, host: address, port: configuration.http.port,
                    logger: logger, onListening: onListening
                )
            )
        }
        if configuration.metrics.prometheusListenerEnabled {
            // The gateway's own answers on this listener too: 404 and 405 with `Allow`, HEAD, the access log.
            let metricsRoutes = [GatewayRoute(.get, "/metrics") { _, _ in OperationsRoutes.metricsResponse(metrics) }]
            let metricsResponder = GatewayRouterBuilder.responder(
                routes: metricsRoutes, metrics: metrics, maxRequestBodySize: configuration.http.maxRequestBodySize,
                accessLogUsesForwardedFor: configuration.log.accessUsesForwardedFor
            )
            services.append(
                Self.listener(
                    name: "metrics", responder: metricsResponder, limits: limits, connections: connections,
                    host: configuration.metrics.prometheusAddress, port: configuration.metrics.prometheusPort, logger: logger, onListening: onListening
                )
            )
        }
        return Gateway(
            store: store, metrics: metrics, dispatcher: dispatcher, services: services, reconfiguration: reconfiguration,
            shutdownLimit: Self.maximumGracefulShutdownDuration(for: configuration), logger: logger
        )
    }

    /// Checks everything start-up would check without opening anything: every app's settings and key
    /// files.
    /// - Returns: warnings about keys that are ignored and settings seldom meant.
    /// - Throws: ``ConfigurationError`` naming the key at fault.
    public static func check(_ configuration: GatewayConfiguration) throws -> [String] {
        try Self.validate(configuration).configurationWarnings
    }

    /// What every app's credentials say about themselves (identities, certificate dates), for
    /// `check-config`.
    /// - Throws: ``ConfigurationError`` naming the key at fault, as ``check(_:)``.
    public static func credentials(_ configuration: GatewayConfiguration) throws -> [ProviderCredential] {
        try Self.validate(configuration).flatMap(\.credentials)
    }

    /// What `check` and start-up both verify: every app's settings and key files, and each front end's
    /// section.
    static func validate(_ configuration: GatewayConfiguration) throws -> [ProviderFactory.Configured] {
        let configured = try ProviderFactory.configure(configuration.apps, proxy: Self.outboundProxy(configuration))
        _ = try MatrixFrontEnd.appOptions(configuration.apps)
        try NextcloudFrontEnd.check(configuration)
        try GorushFrontEnd.check(configuration)
        try StatusFrontEnd.check(configuration)
        return configured
    }

    /// The sandbox's Status server: on the emulated Waku network, delivering through the demo apps, with an
    /// identity kept in the sandbox directory; nil (with a warning naming the package) without libsecp256k1.
    private static func sandboxStatus(_ environment: SandboxEnvironment, directory: URL, logger: Logger) -> StatusSettings? {
        do {
            try StatusFrontEnd.checkLibrary()
            let keyFile = directory.appendingPathComponent("status-identity.hex").path
            let publicKey = FileManager.default.fileExists(atPath: keyFile)
                ? try StatusFrontEnd.publicKeyHex(ofKeyFile: keyFile) : try StatusFrontEnd.writeNewIdentityKey(file: keyFile)
            var status = StatusSettings(wakuRESTURL: environment.wakuServerURL)
            status.identityKeyFile = keyFile
            status.iosApp = SandboxEnvironment.demoAppIDs.apns
            status.androidApp = SandboxEnvironment.demoAppIDs.fcm
            // Idle, two polls a second (each busy poll brings the next in 5 ms): cheap beside the tests' many sandboxes.
            status.pollInterval = .milliseconds(500)
            logger.notice(
                "sandbox: a Status push notification server on an emulated Waku network",
                metadata: [
                    "public_key": "\(publicKey)", "clients_waku_rest_url": "\(environment.wakuClientURL)",
                    "try": "pushgate status-probe --waku-rest-url \(environment.wakuClientURL) --server-key \(publicKey) --app apns",
                ]
            )
            return status
        } catch {
            logger.warning("sandbox: the Status push notification server is off", metadata: ["reason": "\(error)"])
            return nil
        }
    }

    /// Each app's `inflight_request_limit` (default 512).
    static func inflightLimits(_ configuration: GatewayConfiguration) -> [String: Int] {
        Dictionary(
            configuration.apps.map { ($0.id, (try? $0.options.int("inflight_request_limit")) ?? 512) }, uniquingKeysWith: { first, _ in first }
        )
    }

    /// The back ends that post front ends' feedback to URLs the operator configured.
    private static func webhooks(_ configuration: GatewayConfiguration, logger: Logger) -> [ProviderFactory.Built] {
        var built: [ProviderFactory.Built] = []
        if let settings = configuration.gorush, settings.isServed, let hook = settings.feedbackHookURL, let url = URL(string: hook) {
            let provider = WebhookProvider(
                appID: GorushFrontEnd.feedbackAppID, url: url, headers: settings.feedbackHeaders, timeout: settings.feedbackTimeout, logger: logger
            )
            built.append((provider, provider))
        }
        // A Status server forwarding to a gorush, as status-go does: the whole request, through the outbox.
        if let status = configuration.status, let gorush = status.gorushURL, let url = URL(string: gorush + "/api/push") {
            let provider = WebhookProvider(appID: StatusFrontEnd.gorushAppID, url: url, headers: [], timeout: .seconds(30), logger: logger)
            built.append((provider, provider))
        }
        return built
    }

    /// The proxy for provider requests: the `proxy` key, else `HTTPS_PROXY`, as Sygnal chooses it.
    static func outboundProxy(_ configuration: GatewayConfiguration) -> OutboundProxy? {
        configuration.proxy.flatMap(OutboundProxy.init(url:)) ?? OutboundProxy.fromEnvironment(ProcessInfo.processInfo.environment)
    }

    /// The `Server` header of every answer.
    static let serverName = "Pushgate"

    static func listener<Responder: HTTPResponder>(
        name: String,
        responder: Responder,
        limits: ListenerLimits,
        connections: OpenConnections,
        host: String,
        port: Int,
        logger: Logger,
        onListening: @escaping ListeningHandler
    ) -> any Service where Responder.Context == GatewayRequestContext {
        let guardLimits = limits.connectionGuard
        let bodyLimits = limits.bodyLimits
        let gatewayResponder = GatewayResponder(responder: responder, serverName: Self.serverName, dates: HTTPDateCache(), logger: logger)
        // HummingbirdCore's server runs the gateway's own channel, which answers through the router (see
        // GatewayHTTP1Channel); Hummingbird's `Application`, with its answering path and date service, is
        // not needed.
        let server = GatewayHTTP1Channel(responder: gatewayResponder, limits: guardLimits, connections: connections, bodyLimits: bodyLimits).server(
            configuration: ServerConfiguration(address: .hostname(host, port: port), serverName: Self.serverName),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? port
                logger.notice("listening", metadata: ["listener": "\(name)", "address": "\(host)", "port": "\(port)"])
                await onListening(name, host, port)
            },
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger
        )
        return NamedListener(server: server, name: name, host: host, port: port)
    }

    /// Runs every service until one fails or a graceful shutdown is asked for (by a signal in
    /// `gracefulShutdownSignals`, or by the calling task's own service group).
    public func run(gracefulShutdownSignals: [UnixSignal] = []) async throws {
        try await self.serviceGroup(gracefulShutdownSignals: gracefulShutdownSignals).run()
    }

    /// How long a graceful shutdown may take before what is still running is cancelled. The group stops
    /// its services one after another: the listeners wait for their requests in flight (a Matrix notify's
    /// 20 s, gorush's `sync_timeout`, Nextcloud's `delivery_timeout`), then the outbox worker for its
    /// deliveries under way (30 s each) and their store writes, and the front ends' counts; the limit
    /// covers them in turn, so only something that would never end is cut short (cut short, the store
    /// closes under deliveries that already reached the provider, and their entries are sent again after
    /// the restart). At least 45 s; 83 s with the default settings and gorush's 30-s `sync_timeout`.
    public static func maximumGracefulShutdownDuration(for configuration: GatewayConfiguration) -> Duration {
        let longestRequest = max(MatrixNotifyHandler.deliveryBudget, BackEndSet.longestDeliveryDeadline(configuration))
        // The store's calls: the outbox worker's last writes, and the front ends' counts (Matrix, Nextcloud,
        // Status, gorush) written one after another.
        let phases = longestRequest + OutboxWorker.Configuration().deliveryTimeout + configuration.databaseTimeout * 6 + .seconds(5)
        return max(.seconds(45), phases)
    }

    /// The service group that runs the gateway; `triggerGracefulShutdown()` on it stops the gateway cleanly.
    public func serviceGroup(gracefulShutdownSignals: [UnixSignal] = []) -> ServiceGroup {
        // A service that fails (a listener that cannot bind) shuts the others down gracefully, as a signal
        // would, and its error is thrown once they have stopped. Cancelled instead, a server whose accepted
        // connections were not yet taken up dropped them unfinished, and NIO ends the process on that
        // (SIGILL: "Deinited NIOAsyncWriter without calling finish()"): seen when the sandbox's emulators,
        // which the gateway's clients were already connecting to, were cancelled as the listener failed.
        var configuration = ServiceGroupConfiguration(
            services: self.services.map { .init(service: $0, failureTerminationBehavior: .gracefullyShutdownGroup) },
            gracefulShutdownSignals: gracefulShutdownSignals,
            logger: self.logger
        )
        configuration.maximumGracefulShutdownDuration = self.shutdownLimit
        return ServiceGroup(configuration: configuration)
    }
}
