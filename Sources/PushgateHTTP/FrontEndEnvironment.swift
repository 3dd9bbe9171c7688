public import CoreMetrics
public import Logging
public import PushgateConfig
public import PushgateCore
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
    /// Where a front end's poll loop runs and sleeps (waiting on its connections and timers, handing the
    /// work it finds to other tasks): one of the event loops, so that each poll costs no hand-over between
    /// threads; nil for Swift's shared pool and `Task.sleep`.
    public var pollExecutor: (any PollExecutor)?
    /// The open connections of every listener, against their one cap; a front end with a listener of its
    /// own (gorush's gRPC) counts its connections here too.
    public var connections: OpenConnections

    /// Creates an environment.
    public init(
        configuration: GatewayConfiguration, store: any PushStore, storeIsShared: Bool, dispatcher: Dispatcher,
        metricsFactory: any MetricsFactory, logger: Logger, pollExecutor: (any PollExecutor)? = nil,
        connections: OpenConnections
    ) {
        self.connections = connections
        self.pollExecutor = pollExecutor
        self.configuration = configuration
        self.store = store
        self.storeIsShared = storeIsShared
        self.dispatcher = dispatcher
        self.metricsFactory = metricsFactory
        self.logger = logger
    }
}
