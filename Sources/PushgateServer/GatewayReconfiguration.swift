import CoreMetrics
import Logging
import PushgateConfig
import PushgateCore
import PushgateDelivery
import ServiceLifecycle

/// Applies a reloaded configuration to the running gateway (`SIGHUP`, see ``ConfigurationReloader``).
///
/// Apps added, removed or changed get new back ends (the old ones drain: deliveries already under way
/// finish on them, see ``BackEndSet``), in-flight limits and circuits follow, the Matrix options of the
/// apps are replaced, and the log level and format change. A file that cannot be read or is invalid changes
/// nothing. Settings that take effect only at start are named in the log, never silently ignored.
actor GatewayReconfiguration {
    /// One app's running back end.
    struct RunningApp: Sendable {
        var provider: any PushProvider
        var group: ServiceGroup
        var fingerprint: AppFingerprint
    }

    /// Reads the configuration again (the file `pushgate serve` was started with).
    typealias Load = @Sendable () throws -> GatewayConfiguration

    private var configuration: GatewayConfiguration
    /// The configuration at start: its restart-only settings are the ones that run.
    private let startConfiguration: GatewayConfiguration
    private var apps: [String: RunningApp]
    private var generation = 1
    private let fixedProviders: [any PushProvider]
    private let load: Load
    private let sourceDescription: String
    /// The sandbox's demo apps, which stand in for an empty `apps` as they did at start.
    private let sandboxApps: [AppSettings]?
    private let backEnds: BackEndSet
    private let dispatcher: Dispatcher
    private let deliveryMetrics: DeliveryMetrics
    private let frontEnds: [@Sendable (GatewayConfiguration) throws -> Void]
    /// Told the reloaded apps' credentials (none while the sandbox's demo apps run: their credentials
    /// are made at each start).
    private let credentialWatch: CredentialWatch?
    private let metricsFactory: any MetricsFactory
    private let metrics: ReloadMetrics
    private let logger: Logger
    /// The configuration's generation, for readers outside the actor (the console).
    nonisolated let liveGeneration: LiveValue<Int>

    init(
        configuration: GatewayConfiguration, apps: [String: RunningApp], fixedProviders: [any PushProvider], load: @escaping Load,
        sourceDescription: String, sandboxApps: [AppSettings]?, backEnds: BackEndSet, dispatcher: Dispatcher, deliveryMetrics: DeliveryMetrics,
        frontEnds: [@Sendable (GatewayConfiguration) throws -> Void], credentialWatch: CredentialWatch?, metricsFactory: any MetricsFactory,
        liveGeneration: LiveValue<Int> = LiveValue(1), logger: Logger
    ) {
        self.liveGeneration = liveGeneration
        self.configuration = configuration
        self.startConfiguration = configuration
        self.apps = apps
        self.fixedProviders = fixedProviders
        self.load = load
        self.sourceDescription = sourceDescription
        self.sandboxApps = sandboxApps
        self.backEnds = backEnds
        self.dispatcher = dispatcher
        self.deliveryMetrics = deliveryMetrics
        self.frontEnds = frontEnds
        self.credentialWatch = credentialWatch
        self.metricsFactory = metricsFactory
        self.metrics = ReloadMetrics(factory: metricsFactory)
        self.logger = logger
    }

    /// Reads the configuration again and applies what changed.
    /// - Returns: how it ended.
    @discardableResult
    func reload() -> ReloadMetrics.Outcome {
        let outcome: ReloadMetrics.Outcome
        do {
            let (new, demo) = try self.reloaded()
            outcome = try self.apply(new, sandboxAppsOnly: demo)
        } catch let error as ConfigurationError {
            // As `pushgate check-config` prints it.
            self.logger.error("configuration reload failed: invalid configuration in \(self.sourceDescription): \(error); the running configuration stays")
            outcome = .failed
        } catch {
            self.logger.error("configuration reload failed: \(error); the running configuration stays")
            outcome = .failed
        }
        self.metrics.record(outcome)
        return outcome
    }

    /// The reloaded configuration, completed as start-up completes it, and whether its apps are the
    /// sandbox's demo apps.
    private func reloaded() throws -> (GatewayConfiguration, sandboxAppsOnly: Bool) {
        var new = try self.load()
        if new.apps.isEmpty, let sandboxApps = self.sandboxApps {
            new.apps = sandboxApps
            if new.status == nil { new.status = self.configuration.status }
            return (new, true)
        }
        // A file that lost its apps (`app:` for `apps:`, an emptied section) would remove every app, and
        // the Matrix front end would then reject every pushkey, which homeservers answer by deleting
        // their pushers: refused, as an invalid file is.
        if new.apps.isEmpty, !self.configuration.apps.isEmpty {
            throw ConfigurationError(
                key: "apps", "configures no apps, and a reload may not remove every app (a pusher's app that is gone is rejected, and its homeserver deletes it); restart to run without apps"
            )
        }
        return (new, false)
    }

    private func apply(_ new: GatewayConfiguration, sandboxAppsOnly: Bool) throws -> ReloadMetrics.Outcome {
        let configured = try Gateway.validate(new)
        // As at start: a misspelt key of an app (`allowed_endpoint`) is named, never ignored silently.
        for warning in configured.configurationWarnings { self.logger.warning("configuration: \(warning)") }
        let fingerprints = Dictionary(new.apps.map { ($0.id, AppFingerprint($0)) }, uniquingKeysWith: { first, _ in first })
        let change = ConfigurationChange(
            from: self.configuration, to: new, started: self.startConfiguration, running: self.apps.mapValues(\.fingerprint),
            reloaded: fingerprints
        )
        for warning in new.warnings { self.logger.warning("configuration: \(warning)") }
        for name in change.needsRestart {
            self.logger.warning("configuration reload: \(name) changed and needs a restart to take effect")
        }
        // Front ends check their own sections before anything is replaced, so a failure changes nothing.
        let rebuilt = Set(change.added + change.changed)
        var built: [String: ProviderFactory.Built] = [:]
        do {
            for (app, checked) in zip(new.apps, configured) where rebuilt.contains(app.id) {
                built[app.id] = try ProviderFactory.build(checked, logger: self.logger, metricsFactory: self.metricsFactory)
            }
            for reconfigure in self.frontEnds { try reconfigure(new) }
        } catch {
            // Back ends built for a reload that fails never serve: their clients are shut down.
            self.backEnds.retire(built.values.map { self.backEnds.start($0.service) })
            throw error
        }
        if change.logChanged {
            GatewayLogSettings.apply(level: Logger.Level(rawValue: new.log.level) ?? .info, format: new.log.format == .json ? .json : .text)
        }
        var retiring = change.removed.compactMap { self.apps[$0]?.group }
        let ids = new.apps.map(\.id)
        var running: [String: RunningApp] = [:]
        for id in ids {
            if let fresh = built[id], let fingerprint = fingerprints[id] {
                if let old = self.apps[id] { retiring.append(old.group) }
                running[id] = RunningApp(provider: fresh.provider, group: self.backEnds.start(fresh.service), fingerprint: fingerprint)
            } else if let kept = self.apps[id] {
                running[id] = kept
            }
        }
        self.deliveryMetrics.prepare(appIDs: change.added)
        self.dispatcher.reconfigure(
            ProviderDirectory(ids.compactMap { running[$0]?.provider } + self.fixedProviders),
            inflightLimits: Gateway.inflightLimits(new),
            resetting: Set(change.added + change.changed + change.removed)
        )
        self.backEnds.retire(retiring, drain: BackEndSet.drain(from: self.configuration, to: new))
        self.apps = running
        self.configuration = new
        self.credentialWatch?.replace(with: sandboxAppsOnly ? [] : configured.flatMap(\.credentials))
        guard !change.isEmpty else {
            self.logger.notice("configuration reloaded: nothing to change", metadata: ["generation": "\(self.generation)"])
            return .unchanged
        }
        self.generation += 1
        self.liveGeneration.replace(self.generation)
        self.metrics.recordGeneration(self.generation)
        self.logger.notice(
            "configuration reloaded",
            metadata: [
                "generation": "\(self.generation)", "apps_added": "\(change.added.joined(separator: ","))",
                "apps_removed": "\(change.removed.joined(separator: ","))", "apps_changed": "\(change.changed.joined(separator: ","))",
                "log_changed": "\(change.logChanged)", "front_ends_changed": "\(change.frontEndsChanged.joined(separator: ","))",
            ]
        )
        return .applied
    }
}
