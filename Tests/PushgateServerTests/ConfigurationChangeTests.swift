import Foundation
import PushgateConfig
import PushgateTestSupport
import Testing

@testable import PushgateServer

/// What a reload sees as changed: apps by id (settings, the files they name, the proxy), the log settings,
/// and the settings that need a restart, by name.
@Suite("configuration change")
struct ConfigurationChangeTests {
    static func change(_ old: GatewayConfiguration, _ new: GatewayConfiguration, started: GatewayConfiguration? = nil) -> ConfigurationChange {
        ConfigurationChange(
            from: old, to: new, started: started ?? old,
            running: Dictionary(old.apps.map { ($0.id, AppFingerprint($0)) }, uniquingKeysWith: { first, _ in first }),
            reloaded: Dictionary(new.apps.map { ($0.id, AppFingerprint($0)) }, uniquingKeysWith: { first, _ in first })
        )
    }

    @Test func appsAddedRemovedAndChangedAreNamed() throws {
        let old = try GatewayConfiguration(yaml: """
            apps:
              a: {type: gcm, api_key: one}
              b: {type: gcm, api_key: two}
              c: {type: gcm, api_key: three}
            """)
        let new = try GatewayConfiguration(yaml: """
            apps:
              a: {type: gcm, api_key: one}
              b: {type: gcm, api_key: rotated}
              d: {type: gcm, api_key: four}
            log: {level: debug}
            """)
        let change = Self.change(old, new)
        #expect(change.added == ["d"])
        #expect(change.removed == ["c"])
        #expect(change.changed == ["b"])
        #expect(change.logChanged)
        #expect(change.needsRestart.isEmpty)
        #expect(!change.isEmpty)
        #expect(Self.change(old, old).isEmpty)
    }

    /// The Matrix endpoint's UnifiedPush discovery follows the apps at each reload
    /// (`UnifiedPushGatewayRouteTests`), so adding the first `unifiedpush` app or removing the last needs
    /// no restart.
    @Test func theFirstUnifiedPushAppAddedOrTheLastRemovedNeedsNoRestart() throws {
        let without = try GatewayConfiguration(yaml: "apps:\n  a: {type: gcm, api_key: one}\n")
        let with = try GatewayConfiguration(yaml: "apps:\n  a: {type: gcm, api_key: one}\n  \"*\": {type: unifiedpush}\n")
        let added = Self.change(without, with)
        #expect(added.added == ["*"])
        #expect(added.needsRestart.isEmpty)
        let removed = Self.change(with, without)
        #expect(removed.removed == ["*"])
        #expect(removed.needsRestart.isEmpty)
    }

    @Test func aKeyFileRewrittenInPlaceChangesItsApp() throws {
        let directory = try TemporaryDirectory()
        let key = try directory.write("key.json", "first")
        let yaml = "apps:\n  a: {type: gcm, service_account_file: '\(key)'}\n  b: {type: gcm, api_key: x}\n"
        let old = try GatewayConfiguration(yaml: yaml)
        let running = ["a": AppFingerprint(old.apps[0]), "b": AppFingerprint(old.apps[1])]
        _ = try directory.write("key.json", "second")
        let new = try GatewayConfiguration(yaml: yaml)
        let change = ConfigurationChange(
            from: old, to: new, started: old, running: running, reloaded: ["a": AppFingerprint(new.apps[0]), "b": AppFingerprint(new.apps[1])]
        )
        #expect(change.changed == ["a"])
    }

    @Test func aNewProxyChangesEveryApp() throws {
        let old = try GatewayConfiguration(yaml: "apps:\n  a: {type: gcm, api_key: x}\n  b: {type: gcm, api_key: y}\n")
        let new = try GatewayConfiguration(yaml: "proxy: http://127.0.0.1:3128\napps:\n  a: {type: gcm, api_key: x}\n  b: {type: gcm, api_key: y}\n")
        #expect(Self.change(old, new).changed == ["a", "b"])
    }

    @Test func settingsThatNeedARestartAreNamed() throws {
        let old = try GatewayConfiguration(yaml: "apps:\n  a: {type: gcm, api_key: x}\n")
        let new = try GatewayConfiguration(yaml: """
            http: {port: 5999}
            metrics: {prometheus: {enabled: true, port: 9999}}
            database: {url: 'sqlite:other.sqlite'}
            gorush: {ios_app: a, allow_unauthenticated: true}
            apps:
              a: {type: gcm, api_key: x}
            """)
        let change = Self.change(old, new)
        #expect(change.needsRestart == ["http", "metrics", "database", "gorush"])
        #expect(change.isEmpty)
    }

    /// A restart-only setting changed by one reload still differs from what runs at the next: it is named
    /// again (the file is compared with the start, not with the file read last), and no longer once the
    /// file has the running value back.
    @Test func aRestartOnlySettingIsNamedAtEveryReloadUntilTheFileMatchesWhatRuns() throws {
        let started = try GatewayConfiguration(yaml: "apps:\n  a: {type: gcm, api_key: x}\n")
        let moved = try GatewayConfiguration(yaml: "http: {port: 5999}\napps:\n  a: {type: gcm, api_key: x}\n")
        let movedAndDebug = try GatewayConfiguration(yaml: "http: {port: 5999}\nlog: {level: debug}\napps:\n  a: {type: gcm, api_key: x}\n")
        #expect(Self.change(started, moved, started: started).needsRestart == ["http"])
        let second = Self.change(moved, movedAndDebug, started: started)
        #expect(second.needsRestart == ["http"])
        #expect(second.logChanged)
        let back = try GatewayConfiguration(yaml: "log: {level: debug}\napps:\n  a: {type: gcm, api_key: x}\n")
        #expect(Self.change(movedAndDebug, back, started: started).needsRestart.isEmpty)
    }

    /// A retired back end stays up past the longest deadline a delivery that looked it up may have: 35 s,
    /// or 5 s past a longer gorush `sync_timeout` or Nextcloud `delivery_timeout`, before or after.
    @Test func aRetiredBackEndDrainsPastTheLongestDeliveryDeadline() throws {
        let apps = "apps:\n  a: {type: apns, topic: x}\n"
        let plain = try GatewayConfiguration(yaml: apps)
        let slowGorush = try GatewayConfiguration(yaml: apps + "gorush: {ios_app: a, sync: true, sync_timeout: 120}\n")
        let slowNextcloud = try GatewayConfiguration(yaml: apps + "nextcloud: {apns_app: a, delivery_timeout: 60}\n")
        #expect(BackEndSet.drain(from: plain, to: plain) < .seconds(35), "the 35 s floor is the set's own")
        #expect(BackEndSet.drain(from: slowGorush, to: plain) == .seconds(125))
        #expect(BackEndSet.drain(from: plain, to: slowNextcloud) == .seconds(65))
    }

    @Test func gorushCallersAndAppsChangeLiveButItsPathsNeedARestart() throws {
        let apps = "apps:\n  a: {type: apns, topic: x}\n  b: {type: apns, topic: y}\n"
        let old = try GatewayConfiguration(yaml: apps + "gorush: {ios_app: a, auth_tokens: [one]}\n")
        let live = try GatewayConfiguration(yaml: apps + "gorush: {ios_app: b, auth_tokens: [two, three], sync: true, max_notification: 10}\n")
        #expect(Self.change(old, live).needsRestart.isEmpty)
        #expect(Self.change(old, live).frontEndsChanged == ["gorush"])
        let moved = try GatewayConfiguration(yaml: apps + "gorush: {ios_app: a, auth_tokens: [one], api: {push_uri: /push}}\n")
        #expect(Self.change(old, moved).needsRestart == ["gorush"])
        // A larger max_notification counts at once, but the request body limit it sets follows at the restart.
        let more = try GatewayConfiguration(yaml: apps + "gorush: {ios_app: a, auth_tokens: [one], max_notification: 1000}\n")
        #expect(Self.change(old, more).needsRestart == ["gorush.max_notification"])
        // Within the 1-MiB floor the limit does not move: nothing waits for a restart.
        let few = try GatewayConfiguration(yaml: apps + "gorush: {ios_app: a, auth_tokens: [one], max_notification: 2}\n")
        let fewMore = try GatewayConfiguration(yaml: apps + "gorush: {ios_app: a, auth_tokens: [one], max_notification: 5}\n")
        #expect(Self.change(few, fewMore, started: few).needsRestart.isEmpty)
        #expect(Self.change(old, more).frontEndsChanged == ["gorush"])
        let larger = try GatewayConfiguration(yaml: apps + "gorush: {ios_app: a, auth_tokens: [one]}\nnextcloud: {max_batch_size: 2000}\n")
        #expect(Self.change(old, larger).needsRestart == ["nextcloud.max_batch_size"])
        // Emptying the callers' tokens, or removing the section, refuses every caller at once; the routes
        // go at the restart.
        for closed in [apps + "gorush: {ios_app: a, auth_tokens: []}\n", apps] {
            let change = Self.change(old, try GatewayConfiguration(yaml: closed))
            #expect(change.frontEndsChanged == ["gorush"])
            #expect(change.needsRestart == ["gorush"])
        }
    }

    @Test func consoleTokensChangeLiveButTurningTheConsoleOnOrOffNeedsARestart() throws {
        let old = try GatewayConfiguration(yaml: "console: {admin_tokens: [0123456789abcdef-admin]}\n")
        let rotated = try GatewayConfiguration(yaml: "console: {admin_tokens: [{token: fedcba9876543210-admin, read_only: true}]}\n")
        #expect(Self.change(old, rotated).needsRestart.isEmpty)
        #expect(Self.change(old, rotated).frontEndsChanged == ["console"])
        let off = try GatewayConfiguration(yaml: "console: {enabled: false, admin_tokens: [0123456789abcdef-admin]}\n")
        #expect(Self.change(old, off).needsRestart == ["console.enabled"])
        let none = try GatewayConfiguration(yaml: "log: {level: info}\n")
        #expect(Self.change(old, none).needsRestart == ["console.enabled"])
    }

    @Test func nextcloudAndStatusChangeLiveButTheirTransportNeedsARestart() throws {
        let apps = "apps:\n  a: {type: gcm, api_key: x}\n  b: {type: apns, topic: t}\n"
        let old = try GatewayConfiguration(yaml: apps + "nextcloud: {fcm_app: a}\nstatus: {waku_rest_url: 'http://127.0.0.1:8645', android_app: a}\n")
        let live = try GatewayConfiguration(
            yaml: apps + "nextcloud: {fcm_app: a, apns_app: b, alert_text: Hi}\nstatus: {waku_rest_url: 'http://127.0.0.1:8645', android_app: a, ios_app: b}\n"
        )
        let change = Self.change(old, live)
        #expect(change.needsRestart.isEmpty)
        #expect(change.frontEndsChanged == ["status", "nextcloud"])
        let moved = try GatewayConfiguration(
            yaml: apps + "nextcloud: {fcm_app: a, path_prefix: /push}\nstatus: {waku_rest_url: 'http://127.0.0.1:9999', android_app: a}\n"
        )
        #expect(Self.change(old, moved).needsRestart == ["nextcloud.path_prefix", "status"])
    }
}
