import PushgateConfig

/// What a reloaded configuration changes against the running one: which apps are added, removed or
/// changed (their settings, the files they name, or the outbound proxy), whether the log settings
/// change, and which settings cannot change without a restart.
struct ConfigurationChange: Sendable, Equatable {
    /// App ids (as written under `apps`) new in the reloaded configuration.
    var added: [String] = []
    /// App ids no longer configured.
    var removed: [String] = []
    /// App ids whose back end is rebuilt.
    var changed: [String] = []
    /// Whether `log.level` or `log.format` changes.
    var logChanged = false
    /// Front ends whose settings change live (`gorush`: its callers' tokens (none left: every caller
    /// refused), default apps, sync, limits;
    /// `status`: its texts, payload style and apps; `nextcloud`: all but its path prefix).
    var frontEndsChanged: [String] = []
    /// Settings that differ but take effect only at the next start, by name.
    var needsRestart: [String] = []

    /// Whether the reload changes anything that takes effect now.
    var isEmpty: Bool {
        self.added.isEmpty && self.removed.isEmpty && self.changed.isEmpty && !self.logChanged && self.frontEndsChanged.isEmpty
    }

    /// Compares two configurations; `running` and `reloaded` are each app's fingerprint by app id.
    /// - Parameters:
    ///   - old: the configuration applied last (at start or by the last reload).
    ///   - started: the configuration the gateway started with, whose restart-only settings still run:
    ///     ``needsRestart`` names what differs from it, so a setting changed by an earlier reload is named
    ///     again at every reload until the restart, and no longer once the file has it as it runs.
    init(
        from old: GatewayConfiguration, to new: GatewayConfiguration, started: GatewayConfiguration, running: [String: AppFingerprint],
        reloaded: [String: AppFingerprint]
    ) {
        let proxyChanged = old.proxy != new.proxy
        for app in new.apps {
            guard let before = running[app.id] else {
                self.added.append(app.id)
                continue
            }
            if proxyChanged || before != reloaded[app.id] { self.changed.append(app.id) }
        }
        let kept = Set(new.apps.map(\.id))
        self.removed = old.apps.map(\.id).filter { !kept.contains($0) }
        self.logChanged = old.log.level != new.log.level || old.log.format != new.log.format
        var restart: [String] = []
        if started.http != new.http { restart.append("http") }
        if started.metrics != new.metrics { restart.append("metrics") }
        if started.database != new.database || started.databaseTimeout != new.databaseTimeout { restart.append("database") }
        if started.log.accessUsesForwardedFor != new.log.accessUsesForwardedFor { restart.append("log.access") }
        if new.nextcloud.reloaded(over: started.nextcloud) != new.nextcloud { restart.append("nextcloud.path_prefix") }
        // The console's routes exist or not from the start; its admin tokens change live.
        if started.console.enabled != new.console.enabled || started.console.adminTokens.isEmpty != new.console.adminTokens.isEmpty {
            restart.append("console.enabled")
        }
        if started.console.trustForwardedProto != new.console.trustForwardedProto { restart.append("console.trust_forwarded_proto") }
        // gorush served or not (its routes) is fixed at start too.
        if Self.needsRestart(started.gorush, new.gorush, { $0.reloaded(over: $1) }) || started.gorush?.isServed != new.gorush?.isServed {
            restart.append("gorush")
        }
        // The request body limits follow `max_notification` and `max_batch_size` as they were at the start:
        // a larger one takes its whole effect (requests of that many full-size entries) at the restart.
        if let before = started.gorush, let after = new.gorush, after.requestBodyLimit > before.requestBodyLimit {
            restart.append("gorush.max_notification")
        }
        if new.nextcloud.maxBatchSize > started.nextcloud.maxBatchSize { restart.append("nextcloud.max_batch_size") }
        if Self.needsRestart(started.status, new.status, { $0.reloaded(over: $1) }) { restart.append("status") }
        self.needsRestart = restart
        if let old = old.gorush {
            // A section removed or left without callers refuses every caller at once (its routes stay
            // until the restart named above).
            let closes = old.isServed && new.gorush?.isServed != true
            if closes || (new.gorush.map { $0.isServed && $0.reloaded(over: old) != old } ?? false) { self.frontEndsChanged.append("gorush") }
        }
        if let old = old.status, let new = new.status, new.reloaded(over: old) != old { self.frontEndsChanged.append("status") }
        if new.nextcloud.reloaded(over: old.nextcloud) != old.nextcloud { self.frontEndsChanged.append("nextcloud") }
        if old.console.adminTokens != new.console.adminTokens { self.frontEndsChanged.append("console") }
    }

    /// Whether a front end's section differs in what a reload cannot change: added or removed, or a
    /// setting that `reloaded(over:)` keeps from the running one.
    private static func needsRestart<Settings: Equatable>(
        _ old: Settings?, _ new: Settings?, _ reloaded: (Settings, Settings) -> Settings
    ) -> Bool {
        guard let old, let new else { return (old == nil) != (new == nil) }
        return reloaded(new, old) != new
    }
}
