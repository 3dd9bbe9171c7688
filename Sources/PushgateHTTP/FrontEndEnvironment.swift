public import CoreMetrics
public import Logging
public import PushgateConfig
public import PushgateDelivery
public import PushgateStore

/// What the composition root hands every front end's factory: the configuration, the store, the
/// dispatcher that delivers, where metrics go, and the root logger.
public struct FrontEndEnvironment: Sendable {
    /// The whole configuration; each front end reads its own section.
    public var configuration: GatewayConfiguration
    /// The store, every call bounded in time.
    public var store: any PushStore
    /// Whether other instances share the store (PostgreSQL) or this process has it alone (SQLite).
    public var storeIsShared: Bool
    /// Delivers now or through the outbox.
    public var dispatcher: Dispatcher
    /// Where a front end's metrics are made.
    public var metricsFactory: any MetricsFactory
    /// The root logger.
    public var logger: Logger

    /// Creates an environment.
    public init(
        configuration: GatewayConfiguration, store: any PushStore, storeIsShared: Bool, dispatcher: Dispatcher,
        metricsFactory: any MetricsFactory, logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.storeIsShared = storeIsShared
        self.dispatcher = dispatcher
        self.metricsFactory = metricsFactory
        self.logger = logger
    }
}
