import Foundation
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateHTTP
import PushgateStore

/// Reads the overview's figures: delivery counts and the outbox from the store (every call with the
/// store's deadline), recent failures from this instance's memory, the rest from the configuration.
struct ConsoleOverviewSource: Sendable {
    /// An app as configured.
    struct App: Sendable {
        var id: String
        var type: String
        var endpoint: String
    }

    let store: BoundedStore
    /// The apps of the running configuration (they follow reloads).
    let apps: @Sendable () -> [App]
    /// The credentials now watched (they follow reloads).
    let credentials: @Sendable () -> [ProviderCredential]
    let failures: RecentFailures
    let sandbox: Bool
    let started: ContinuousClock.Instant
    /// This instance's name, listed under instances.
    let instance: String
    /// Whether other instances share the store (PostgreSQL): then every instance whose heartbeat
    /// (``InstanceHeartbeat``) is recent is listed, else this one alone.
    let storeIsShared: Bool
    /// The configuration's generation (1 at start, one more each successful reload).
    let generation: @Sendable () -> Int
    /// An app's delivery state on this instance (the dispatcher's).
    let state: @Sendable (String) -> DeliveryAppState
    /// The figures of the front ends that are running, by name (``FrontEnd/figures``).
    var frontEnds: [String: @Sendable () async -> [FrontEndFigure]?] = [:]

    /// The outbox backlog as last read (by the backlog sampler, or by an overview), and how old a reading
    /// may be to be used; without a recent one the overview reads the store itself and keeps the reading.
    var backlog: (reading: OutboxBacklogReading, lifetime: Duration)?

    /// The front ends the overview lists, in its order.
    static let frontEndNames = ["matrix", "nextcloud", "gorush", "status"]

    func overview(now: Date = Date()) async -> ConsoleOverview {
        let minute = DeliveryTally.minute(of: now)
        // Read before the apps: a reload replaces the apps, then raises the generation, so an overview
        // made across a reload shows the new apps with the old generation (the page's script then loads
        // the page again), never the old apps with the new one.
        let generation = self.generation()
        var rows = self.apps().map { ConsoleOverview.AppRow(id: $0.id, type: $0.type, endpoint: $0.endpoint) }
        var index = Dictionary(rows.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        func row(_ appID: String) -> Int {
            if let at = index[appID] { return at }
            rows.append(ConsoleOverview.AppRow(id: appID, type: "-", endpoint: "-"))
            index[appID] = rows.count - 1
            return rows.count - 1
        }
        var problem: String?
        var chart = (0..<60).map { ConsoleOverview.Minute(minute: minute - 59 + Int64($0), outcomes: .init()) }
        var outboxPending = 0
        var oldestAge: Int64 = 0
        var instances = [self.instance]
        do {
            // Sums the database makes (by app and outcome, by minute and outcome), read at once: a few
            // hundred rows, not the last hour's rows one by one.
            let store = self.store
            async let day = store.deliverySumsByApp(minutes: (minute - 1439)..<(minute + 1), currentMinute: minute)
            async let hour = store.deliverySumsByApp(minutes: (minute - 59)..<(minute + 1), currentMinute: minute)
            async let minutes = store.deliverySumsByMinute(minutes: (minute - 59)..<(minute + 1))
            // The backlog: a reading made within `lifetime` (by the backlog sampler or an earlier overview;
            // it is a scan of the whole outbox, too costly for every refresh of every open console), or
            // the store's answer, kept for the next overviews.
            async let backlogs = self.backlogs()
            async let seen = self.storeIsShared ? store.instances(seenSince: now.addingTimeInterval(-InstanceHeartbeat.listedFor)) : []
            for sum in try await day { rows[row(sum.appID)].lastDay.add(sum.outcome, sum.count) }
            for sum in try await hour { rows[row(sum.appID)].lastHour.add(sum.outcome, sum.count) }
            for sum in try await minutes {
                let slot = Int(sum.minute - (minute - 59))
                if chart.indices.contains(slot) { chart[slot].outcomes.add(sum.outcome, sum.count) }
            }
            for backlog in try await backlogs {
                let age = max(0, Int64(now.timeIntervalSince(backlog.oldestCreatedAt)))
                let at = row(backlog.appID)
                rows[at].outboxPending = backlog.tokens
                rows[at].outboxOldestAgeSeconds = age
                outboxPending += backlog.tokens
                oldestAge = max(oldestAge, age)
            }
            instances = Set(try await seen.map(\.name) + [self.instance]).sorted()
        } catch {
            problem = "the store did not answer: some figures are missing"
        }
        for index in rows.indices { rows[index].state = self.state(rows[index].id) }
        // Each front end's counts are a store read: read at once, not one after another.
        let figures = await withTaskGroup(of: (String, [FrontEndFigure]?).self) { group in
            for name in Self.frontEndNames {
                guard let read = self.frontEnds[name] else { continue }
                group.addTask { (name, await read()) }
            }
            return await group.reduce(into: [String: [FrontEndFigure]]()) { figures, read in
                if let shown = read.1 { figures[read.0] = shown }
            }
        }
        let sections = Self.frontEndNames.map { ConsoleOverview.FrontEndSection(name: $0, figures: figures[$0]) }
        let uptime = ContinuousClock.now - self.started
        return ConsoleOverview(
            version: PushgateVersion.current, uptimeSeconds: uptime.components.seconds, configurationGeneration: generation,
            store: self.store.kind, storeHealthy: problem == nil, sandbox: self.sandbox, apps: rows, outboxPending: outboxPending,
            outboxOldestAgeSeconds: oldestAge, credentials: self.credentials().map { Self.credential($0, now: now) }, chart: chart,
            failures: self.failures.newestFirst, instances: instances, frontEnds: sections, problem: problem
        )
    }

    /// The outbox backlog by app: a reading made within the backlog's lifetime, or the store's answer,
    /// then kept as the latest reading.
    private func backlogs() async throws -> [OutboxAppBacklog] {
        if let recent = self.backlog.flatMap({ $0.reading.current(maximumAge: $0.lifetime)?.backlogs }) { return recent }
        let read = try await self.store.backlogByApp()
        self.backlog?.reading.record(read)
        return read
    }

    static func credential(_ credential: ProviderCredential, now: Date) -> ConsoleOverview.Credential {
        var warning: String?
        if let notAfter = credential.notAfter {
            let days = notAfter.timeIntervalSince(now) / 86_400
            warning = days <= 0 ? "expired" : days <= 1 ? "1 day" : days <= 7 ? "7 days" : days <= 30 ? "30 days" : nil
        }
        return ConsoleOverview.Credential(
            app: credential.appID, kind: credential.kind.rawValue, identity: credential.identity, expiresAt: credential.notAfter, warning: warning
        )
    }
}
