public import PushgateConfig
public import PushgateDelivery
public import ServiceLifecycle

/// What one front end (an inbound protocol, or the gateway's own operations routes) contributes to the
/// gateway: its routes and the long-lived services it needs. The composition root assembles the gateway
/// from a list of these instead of wiring each protocol by hand.
public struct FrontEnd: Sendable {
    /// A short name for logs (`matrix`, `nextcloud`).
    public var name: String
    /// The routes it answers.
    public var routes: [GatewayRoute]
    /// Services it runs for as long as the gateway runs (none for most front ends).
    public var services: [any Service]
    /// Services that write its counts to the store (``StoredCounts``): started before and stopped after
    /// the outbox worker, whose deliveries at shutdown they still count.
    public var countWriters: [any Service]
    /// Hears how the notifications it queued with a ``DeliveryReport`` ended; nil for most front ends.
    public var outcomeObserver: (any DeliveryOutcomeObserver)?
    /// Takes this front end's settings from a reloaded configuration, which the gateway has checked
    /// already; nil when none of them can change without a restart.
    public var reconfigure: (@Sendable (GatewayConfiguration) throws -> Void)?
    /// What the operator console shows of this front end (its counts, its state); the
    /// closure answers nil while the front end has nothing configured to serve. Nil for front ends the
    /// console does not list.
    public var figures: (@Sendable () async -> [FrontEndFigure]?)?

    /// Creates a front end's contribution.
    public init(
        name: String, routes: [GatewayRoute], services: [any Service] = [], countWriters: [any Service] = [],
        outcomeObserver: (any DeliveryOutcomeObserver)? = nil, figures: (@Sendable () async -> [FrontEndFigure]?)? = nil,
        reconfigure: (@Sendable (GatewayConfiguration) throws -> Void)? = nil
    ) {
        self.name = name
        self.routes = routes
        self.services = services
        self.countWriters = countWriters
        self.outcomeObserver = outcomeObserver
        self.figures = figures
        self.reconfigure = reconfigure
    }
}
