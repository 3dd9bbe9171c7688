import Foundation
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateHTTP
@testable import PushgateServer
import PushgateStore
import PushgateStoreSQLite
import PushgateTestSupport
import Testing

/// The overview's instances and front ends, read from a real store and the front ends' figures.
@Suite("Console overview source")
struct ConsoleOverviewSourceTests {
    static func source(store: BoundedStore, shared: Bool, frontEnds: [String: @Sendable () async -> [FrontEndFigure]?] = [:]) -> ConsoleOverviewSource {
        var source = ConsoleOverviewSource(
            store: store, apps: { [ConsoleOverviewSource.App(id: "a", type: "apns", endpoint: "production")] }, credentials: { [] },
            failures: RecentFailures(), sandbox: false, started: .now, instance: "this/1", storeIsShared: shared, generation: { 1 },
            state: { _ in DeliveryAppState(inFlight: 0, circuitOpen: false, credentialsFailing: false, latencyMilliseconds: nil) }
        )
        source.frontEnds = frontEnds
        return source
    }

    /// On a shared store the instances whose heartbeat is under a minute old are listed, this one
    /// always; on a store of its own, this one alone.
    @Test func instancesSeenInTheLastMinuteAreListed() async throws {
        let directory = try TemporaryDirectory()
        let store = BoundedStore(try await SQLiteStore.open(path: directory.path("store.sqlite"), logger: TestLogging.quiet), timeout: .seconds(5))
        let now = Date()
        for (name, age) in [("other/7", 20.0), ("gone/9", 61.0), ("this/1", 5.0)] {
            try await store.recordInstance(InstanceRecord(name: name, lastSeen: now.addingTimeInterval(-age), version: "1", started: now.addingTimeInterval(-600)))
        }
        #expect(await Self.source(store: store, shared: true).overview(now: now).instances == ["other/7", "this/1"])
        #expect(await Self.source(store: store, shared: false).overview(now: now).instances == ["this/1"])
        // The heartbeat records this instance, and its purge forgets instances gone for a day.
        let heartbeat = InstanceHeartbeat(store: store, name: "beat/3", started: now, logger: TestLogging.quiet)
        await heartbeat.beat(now: now)
        await heartbeat.purge(now: now.addingTimeInterval(86_400 - 10))
        #expect(try await store.instances(seenSince: .distantPast).map(\.name) == ["beat/3", "this/1"])
    }

    /// The backlog comes from the backlog sampler's last reading while it is recent, not from a scan of
    /// the whole outbox on every refresh; without a recent reading, from the store.
    @Test func theBacklogIsTheSamplersRecentReadingElseTheStores() async throws {
        let directory = try TemporaryDirectory()
        let store = BoundedStore(try await SQLiteStore.open(path: directory.path("store.sqlite"), logger: TestLogging.quiet), timeout: .seconds(5))
        _ = try await store.enqueue([OutboxMessage(appID: "a", pushTokens: ["1", "2"], payload: [1], notBefore: Date())])
        let reading = OutboxBacklogReading()
        var source = Self.source(store: store, shared: false)
        source.backlog = (reading, .seconds(30))
        // No reading yet: the store's answer.
        var overview = await source.overview()
        #expect(overview.outboxPending == 2)
        #expect(overview.apps.first { $0.id == "a" }?.outboxPending == 2)
        // A recent reading stands, even where the store has changed since.
        reading.record([OutboxAppBacklog(appID: "a", tokens: 7, oldestCreatedAt: Date().addingTimeInterval(-40))])
        overview = await source.overview()
        #expect(overview.outboxPending == 7)
        #expect(overview.outboxOldestAgeSeconds >= 39 && overview.outboxOldestAgeSeconds <= 41)
        // A reading older than its lifetime is not used; the store's answer is kept for the next overviews.
        reading.record([OutboxAppBacklog(appID: "a", tokens: 9, oldestCreatedAt: Date())], at: .now - .seconds(31))
        overview = await source.overview()
        #expect(overview.outboxPending == 2)
        #expect(reading.current(maximumAge: .seconds(30))?.backlogs.map(\.tokens) == [2])
    }

    /// An APNs app's endpoint is read as the APNs back end reads `platform`: case-insensitively.
    @Test func appsShowTheEndpointTheirBackEndUses() throws {
        let configuration = try GatewayConfiguration(yaml: """
            apps:
              a: {type: apns, platform: Sandbox}
              b: {type: apns}
              c: {type: gcm}
            """)
        let apps = Gateway.consoleApps(configuration, sandbox: false)
        #expect(apps.map(\.endpoint) == ["sandbox", "production", "production"])
        #expect(Gateway.consoleApps(configuration, sandbox: true).map(\.endpoint) == ["sandbox", "sandbox", "sandbox"])
    }

    /// Every front end has a section, in a fixed order; one not running, or with nothing configured,
    /// is "not configured"; figures are in the JSON by key and on the page by test id.
    @Test func frontEndsAreListedConfiguredOrNot() async throws {
        let directory = try TemporaryDirectory()
        let store = BoundedStore(try await SQLiteStore.open(path: directory.path("store.sqlite"), logger: TestLogging.quiet), timeout: .seconds(5))
        let polled = Date(timeIntervalSince1970: 1_800_000_000)
        let source = Self.source(store: store, shared: false, frontEnds: [
            "matrix": { [FrontEndFigure(key: "notifies", label: "Notify requests", value: .count(3))] },
            "nextcloud": { nil },
            "status": {
                [FrontEndFigure(key: "last_poll", label: "Last poll", value: .time(polled)), FrontEndFigure(key: "backfill", label: "B", value: .time(nil)),
                 FrontEndFigure(key: "waku_node", label: "Waku <node>", value: .text("reachable"))]
            },
        ])
        let overview = await source.overview()
        #expect(overview.frontEnds.map(\.name) == ["matrix", "nextcloud", "gorush", "status"])
        #expect(overview.frontEnds.map { $0.figures != nil } == [true, false, false, true])
        guard case .object(let json) = overview.json, case .array(let sections)? = json["front_ends"] else {
            Issue.record("no front_ends array")
            return
        }
        #expect(sections[0] == ["name": "matrix", "configured": true, "figures": ["notifies": 3], "shown": ["notifies": "3"]])
        #expect(sections[1] == ["name": "nextcloud", "configured": false, "figures": .object([:]), "shown": .object([:])])
        #expect(
            sections[3] == [
                "name": "status", "configured": true, "figures": ["last_poll": "2027-01-15T08:00:00Z", "backfill": .null, "waku_node": "reachable"],
                "shown": ["last_poll": "2027-01-15 08:00:00Z", "backfill": "never", "waku_node": "reachable"],
            ]
        )
        let page = ConsolePage.overview(overview, viewer: ConsolePage.Viewer(admin: try #require(ConsoleAdmins([.init(token: "0123456789abcdef-admin")]).admin(presenting: "0123456789abcdef-admin"))))
        #expect(page.contains(#"<dd data-testid="fe-matrix-notifies">3</dd>"#))
        #expect(page.contains(#"<p class="note" data-testid="fe-gorush-state">not configured</p>"#))
        #expect(page.contains("<dt>Waku &lt;node&gt;</dt>"))
        #expect(page.contains(#"<dd data-testid="fe-status-last_poll">2027-01-15 08:00:00Z</dd>"#))
    }
}
