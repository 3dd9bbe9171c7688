import Logging
import PushgateConfig
import ServiceLifecycle

/// The running delivery back ends, as one service: it runs each back end's service (which owns its
/// connections) in a service group of its own, so that a configuration reload can start new back ends and
/// retire old ones while the gateway runs.
///
/// A retired back end is out of the ``PushgateDelivery/ProviderDirectory`` already, so nothing new reaches
/// it; it is shut down (its connections closed) after ``drainPeriod``, by which time every delivery that
/// looked it up before the reload has met its deadline. At the gateway's shutdown every back end, retiring
/// or not, shuts down with this service.
final class BackEndSet: Service, Sendable {
    private enum Command: Sendable {
        case start(ServiceGroup)
        case retire(ServiceGroup, drain: Duration)
    }

    /// How long a retired back end keeps its connections for the deliveries already under way.
    let drainPeriod: Duration
    private let initial: [ServiceGroup]
    private let commands: AsyncStream<Command>
    private let continuation: AsyncStream<Command>.Continuation
    private let logger: Logger

    /// Creates the set with the back ends configured at start.
    init(services: [any Service], drainPeriod: Duration = .seconds(35), logger: Logger) {
        self.drainPeriod = drainPeriod
        self.logger = logger
        self.initial = services.map { Self.group($0, logger: logger) }
        (self.commands, self.continuation) = AsyncStream.makeStream(of: Command.self)
    }

    /// Starts a back end added by a reload; returns what ``retire(_:)`` takes to stop it.
    func start(_ service: any Service) -> ServiceGroup {
        let group = Self.group(service, logger: self.logger)
        self.continuation.yield(.start(group))
        return group
    }

    /// Shuts back ends down after the drain period, or after `drain` when that is longer (the longest
    /// delivery deadline a front end may give, under the configuration before and after the reload).
    func retire(_ groups: [ServiceGroup], drain: Duration = .zero) {
        let drain = max(drain, self.drainPeriod)
        for group in groups { self.continuation.yield(.retire(group, drain: drain)) }
    }

    /// The drain a reload from `old` to `new` needs: five seconds past the longest deadline of a delivery
    /// that may have looked a back end up before it (a synchronous gorush request, a Nextcloud batch).
    static func drain(from old: GatewayConfiguration, to new: GatewayConfiguration) -> Duration {
        max(Self.longestDeliveryDeadline(old), Self.longestDeliveryDeadline(new)) + .seconds(5)
    }

    /// The longest deadline a front end may give a delivery it looked a back end up for before answering
    /// (a synchronous gorush request, a Nextcloud batch).
    static func longestDeliveryDeadline(_ configuration: GatewayConfiguration) -> Duration {
        max(configuration.gorush?.syncTimeout ?? .zero, configuration.nextcloud.deliveryTimeout)
    }

    /// The groups of the back ends configured at start, for ``retire(_:)``.
    var initialGroups: [ServiceGroup] { self.initial }

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { tasks in
            for group in self.initial {
                tasks.addTask { try await group.run() }
            }
            // Each back end's group is a child task, so it shuts down with this service (a service group
            // hears the graceful shutdown of the task that runs it).
            for await command in self.commands.cancelOnGracefulShutdown() {
                switch command {
                case .start(let group):
                    tasks.addTask { try await group.run() }
                case .retire(let group, let drain):
                    tasks.addTask {
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: drain) }
                        await group.triggerGracefulShutdown()
                    }
                }
            }
        }
    }

    private static func group(_ service: any Service, logger: Logger) -> ServiceGroup {
        ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: service)], logger: logger))
    }
}
