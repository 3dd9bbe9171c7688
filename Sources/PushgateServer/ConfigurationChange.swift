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
    /// Front ends whose settings change live (`gorush`: its callers' tokens, default apps, sync, limits;
    /// `status`: its texts, payload style and apps; `nextcloud`: all but its path prefix).
    var frontEndsChanged: [String] = []
    /// Settings that differ but take effect only at the next start, by name.
    var needsRestart: [String] = []

    /// Whether the reload changes anything that takes effect now.
    var isEmpty: Bool {
        self.added.isEmpty && self.removed.isEmpty && self.changed.isEmpty && !self.logChanged && self.frontEndsChanged.isEmpty
    }

    /// Compares two configurations; `running` and `reloaded` are each app's fingerprint by app id.
    init(
        from old: GatewayConfiguration, to new: GatewayConfiguration, running: [String: AppFingerprint], reloaded: [String: AppFingerprint]
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
        if old.http != new.http { restart.append("http") }
        if old.metrics != new.metrics { restart.append("metrics") }
        if old.database != new.database || old.databaseTimeout != new.databaseTimeout { restart.append("database") }
        if old.log.accessUsesForwardedFor != new.log.accessUsesForwardedFor { restart.append("log.access") }
        // The Matrix endpoint's GET (UnifiedPush discovery) is routed at start, when a unifiedpush app exists.
        if old.apps.contains(where: { $0.kind == .unifiedpush }) != new.apps.contains(where: { $0.kind == .unifiedpush }) {
            restart.append("UnifiedPush discovery (the first unifiedpush app added, or the last removed)")
        }
        if old.nextcloud.pathPrefix != new.nextcloud.pathPrefix { restart.append("nextcloud.path_prefix") }
        if Self.gorushAtStart(old.gorush) != Self.gorushAtStart(new.gorush) { restart.append("gorush") }
        if Self.statusAtStart(old.status) != Self.statusAtStart(new.status) { restart.append("status") }
        self.needsRestart = restart
        if old.gorush != new.gorush, !restart.contains("gorush") { self.frontEndsChanged.append("gorush") }
        if old.status != new.status, !restart.contains("status") { self.frontEndsChanged.append("status") }
        if old.nextcloud != new.nextcloud { self.frontEndsChanged.append("nextcloud") }
    }

    /// The Status settings a reload does not change (the Waku node, the identity, polling, backfill, the
    /// gorush forwarding): the texts, the payload style and the apps are set to one value.
    private static func statusAtStart(_ settings: StatusSettings?) -> StatusSettings? {
        guard var settings else { return nil }
        settings.iosApp = nil
        settings.androidApp = nil
        settings.payloadStyle = .current
        settings.texts = StatusSettings.Texts.defaults(for: .current)
        return settings
    }

    /// The gorush settings a reload does not change (paths, gRPC, the feedback webhook, hiding tokens and
    /// messages in feedback): the rest (callers' tokens, default apps, sync, limits) is set to one value.
    private static func gorushAtStart(_ settings: GorushSettings?) -> GorushSettings? {
        guard var settings, settings.isServed else { return settings }
        let live = GorushSettings()
        settings.iosApp = live.iosApp
        settings.androidApp = live.androidApp
        settings.huaweiApp = live.huaweiApp
        settings.maxNotification = live.maxNotification
        settings.sync = live.sync
        settings.syncTimeout = live.syncTimeout
        settings.authTokens = live.authTokens
        settings.allowUnauthenticated = true
        return settings
    }
}
