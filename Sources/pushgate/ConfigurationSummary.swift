import Foundation
import PushgateConfig
import PushgateCore
import PushgateStatus

/// The human-readable account `check-config` prints, with no secrets in it.
struct ConfigurationSummary {
    let source: ConfigurationSource
    let configuration: GatewayConfiguration
    /// What each app's credentials say about themselves.
    let credentials: [ProviderCredential]
    /// The time certificate dates are compared with.
    let now: Date

    var text: String {
        var lines = ["configuration: \(self.source.displayDescription): valid"]
        let http = self.configuration.http
        lines.append("http: \(http.bindAddresses.map { "\($0):\(http.port)" }.joined(separator: ", ")) (max request body \(http.maxRequestBodySize) bytes)")
        lines.append("database: \(self.configuration.database.displayDescription)")
        lines.append("log: level \(self.configuration.log.level), format \(self.configuration.log.format.rawValue)")
        let metrics = self.configuration.metrics
        lines.append(
            metrics.prometheusListenerEnabled
                ? "metrics: /metrics, and a Prometheus listener on \(metrics.prometheusAddress):\(metrics.prometheusPort)"
                : "metrics: /metrics"
        )
        if let proxy = self.configuration.proxy { lines.append("proxy: \(Redaction.maskingPassword(in: proxy))") }
        let apps = self.configuration.apps
        let counts = AppSettings.Kind.allCases.compactMap { kind -> String? in
            let count = apps.filter { $0.kind == kind }.count
            return count == 0 ? nil : "\(kind.rawValue): \(count)"
        }
        lines.append("apps: \(apps.count)" + (counts.isEmpty ? "" : " (\(counts.joined(separator: ", ")))"))
        for app in apps {
            lines.append("  \(app.id): \(app.kind.rawValue)" + Self.detail(of: app))
            for credential in self.credentials where credential.appID == app.id {
                lines.append("    " + credential.summary + Self.expiryNote(credential, now: self.now))
            }
        }
        if apps.contains(where: { $0.kind == .unifiedpush }) {
            lines.append("matrix: UnifiedPush gateway discovery on GET /_matrix/push/v1/notify")
        }
        if let gorush = self.configuration.gorush {
            let callers = gorush.authTokens.isEmpty
                ? (gorush.allowUnauthenticated ? "any caller (allow_unauthenticated)" : "no caller: not served")
                : "\(gorush.authTokens.count) caller tokens" + (gorush.allowUnauthenticated ? " and unauthenticated callers" : "")
            let apps = [("ios", gorush.iosApp), ("android", gorush.androidApp), ("huawei", gorush.huaweiApp)].compactMap { name, app in app.map { "\(name) \($0)" } }
            lines.append(
                "gorush: POST \(gorush.pushPath) for \(callers); apps \(apps.isEmpty ? "none by default" : apps.joined(separator: ", ")); "
                    + (gorush.sync ? "sync (answers after delivery)" : "async (queued)") + (gorush.grpcEnabled ? "; gRPC on" : "")
            )
        }
        let nextcloud = self.configuration.nextcloud
        if nextcloud.fcmApp != nil || nextcloud.apnsApp != nil || !nextcloud.routes.isEmpty {
            let apps = [("fcm", nextcloud.fcmApp), ("apns", nextcloud.apnsApp), ("apns voip", nextcloud.apnsVoipApp)].compactMap { name, app in app.map { "\(name) \($0)" } }
            lines.append(
                "nextcloud: \(nextcloud.pathPrefix)/devices and \(nextcloud.pathPrefix)/notifications; apps \(apps.joined(separator: ", "))"
                    + (nextcloud.routes.isEmpty ? "" : ", \(nextcloud.routes.count) routes by user agent")
                    + (nextcloud.rateLimit.map { "; at most \($0.notifications) notifications a sender per \($0.window)" } ?? "")
            )
        }
        if let status = self.configuration.status {
            let delivery = status.gorushURL.map { "forwarded to gorush at \(Redaction.displayURL($0))" }
                ?? "delivered through \([status.iosApp, status.androidApp].compactMap { $0 }.joined(separator: " and "))"
            lines.append(
                "status: push notification server on \(status.pubsubTopic) through the Waku node at \(Redaction.displayURL(status.wakuRESTURL)), payloads \(status.payloadStyle.rawValue), \(delivery)"
            )
            let key = status.identityKeyFile.flatMap { try? StatusFrontEnd.publicKeyHex(ofKeyFile: $0) } ?? "generated once and kept in the store"
            lines.append("  server public key: \(key)")
            let minutes = status.backfillWindow.components.seconds / 60
            lines.append(
                minutes > 0
                    ? "  missed messages: caught up from the node's store, up to \(minutes) min back (node cache: \(status.wakuCacheCapacity) messages)"
                    : "  missed messages: not caught up (backfill_window_minutes: 0)"
            )
        }
        if self.configuration.console.isEnabled {
            let console = self.configuration.console
            let readOnly = console.adminTokens.filter(\.readOnly).count
            lines.append("console: /console, \(console.adminTokens.count) admin tokens (\(readOnly) read-only)")
        }
        if !self.configuration.warnings.isEmpty {
            lines.append("warnings: \(self.configuration.warnings.count)")
        }
        return lines.joined(separator: "\n")
    }

    /// ` (expires within N days)` or ` (EXPIRED)` for a certificate near or past its end.
    private static func expiryNote(_ credential: ProviderCredential, now: Date) -> String {
        guard let notAfter = credential.notAfter else { return "" }
        switch CredentialExpiry(notAfter: notAfter, now: now) {
        case .valid: return ""
        case .within(let days): return " (expires within \(days) \(days == 1 ? "day" : "days"))"
        case .expired: return " (EXPIRED: the provider refuses it)"
        }
    }

    /// What an app's line adds to its type: for UnifiedPush apps, where endpoints may be.
    private static func detail(of app: AppSettings) -> String {
        guard app.kind == .unifiedpush else { return "" }
        let allowed = (try? app.options.stringList("allowed_endpoints")) ?? nil
        return allowed.map { " (only hosts matching allowed_endpoints: \($0.count) globs)" } ?? " (any public https endpoint)"
    }
}
