import Foundation
import PushgateCore
import PushgateDelivery
import PushgateStore
import PushgateStoreSQLite
import Testing

/// A backlog of one app does not delay another app's notifications, nor a backlog that one front end
/// queued for an app the notifications another front end queues for the same app: the outbox worker's
/// claims are shared between the lanes (an app and one of its front ends) with due entries.
@Suite("Backlog fairness")
struct BacklogFairnessTests {
    /// 50,000 entries of app a are waiting when the worker starts (queued while no worker ran, so they are
    /// claimed from the store, not handed over in memory), and one of app b after them. a's deliveries
    /// take 100 ms each, so a worker taking entries oldest first reaches b only after 50,000 / 128 rounds
    /// on its 2 lanes: about 20 seconds. Shared claims deliver b in the first round.
    ///
    /// The goal is b delivered within a second of the worker starting; the test checks the order, without
    /// timing: when b is delivered, a has had at most a few rounds (fewer than 2,000 of its 50,000
    /// tokens), where claims in due order would have handed out all 50,000 first. It allows a minute for
    /// the wait itself (a busy 2-core machine running a debug build, opening the store included).
    @Test func aFreshEntryOfOneAppIsDeliveredPromptlyBehindAnotherAppsBacklog() async throws {
        try await Self.deliverBehindABacklog(
            backlog: (appID: "app.a", frontEnd: "gorush"), fresh: (appID: "app.b", frontEnd: "gorush")
        )
    }

    /// The same within one app: 50,000 entries that gorush queued for app a, then one that nextcloud
    /// queued for app a. Claims shared between apps alone would see one app and take its entries oldest
    /// first (about 20 seconds, as above); shared between the app's front ends, nextcloud's entry goes in
    /// the first round. The same bounds as above: fewer than 2,000 of gorush's tokens before it, and
    /// within a minute.
    @Test func aFreshEntryOfOneFrontEndIsDeliveredPromptlyBehindAnotherFrontEndsBacklogOfTheSameApp() async throws {
        try await Self.deliverBehindABacklog(
            backlog: (appID: "app.a", frontEnd: "gorush"), fresh: (appID: "app.a", frontEnd: "nextcloud")
        )
    }

    /// Queues 50,000 entries of `backlog` and then one (token `fresh`) of `fresh` while no worker runs,
    /// starts a worker, and checks that `fresh` is delivered before 2,000 of the backlog's, within a minute.
    static func deliverBehindABacklog(
        backlog: (appID: String, frontEnd: String), fresh: (appID: String, frontEnd: String)
    ) async throws {
        let (store, path) = try await DispatcherAndOutboxTests.openStore()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let busy = ScriptedProvider(appID: backlog.appID, delay: .milliseconds(100))
        // The fresh entry's app: the busy one itself when both lanes are of one app.
        let other = fresh.appID == backlog.appID ? busy : ScriptedProvider(appID: fresh.appID)
        let directory = ProviderDirectory(fresh.appID == backlog.appID ? [busy] : [busy, other])
        let count = 50_000
        // Queued with no worker running: stored for any worker to claim.
        let queuing = Dispatcher(directory: directory, store: store, metrics: metrics, logger: TestLogging.quiet)
        try await DispatcherAndOutboxTests.running([store]) { () async throws in
            for chunk in stride(from: 0, to: count, by: 5_000) {
                try await queuing.enqueue(
                    (chunk..<chunk + 5_000).map {
                        Dispatcher.Queued(DispatcherAndOutboxTests.notification, appID: backlog.appID, frontEnd: backlog.frontEnd, tokens: ["a-\($0)"])
                    }
                )
            }
            try await queuing.enqueue(DispatcherAndOutboxTests.notification, appID: fresh.appID, frontEnd: fresh.frontEnd, tokens: ["fresh"])
            #expect(try await store.pendingCount() == count + 1)
        }

        let (reopened, _) = try await DispatcherAndOutboxTests.openStore(at: path)
        let wakeUp = OutboxWakeUp()
        let dispatcher = Dispatcher(directory: directory, store: reopened, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        let worker = OutboxWorker(dispatcher: dispatcher, store: reopened, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        let started = ContinuousClock.now
        try await DispatcherAndOutboxTests.running([reopened, worker]) { () async throws in
            #expect(try await DispatcherAndOutboxTests.eventually(timeout: .seconds(120)) { other.deliveredTokens.contains("fresh") })
            let waited = ContinuousClock.now - started
            let backlogDelivered = busy.deliveredTokens.prefix { $0 != "fresh" }.count
            // The order below is what tells a fair outbox from one that drains the backlog first (which
            // takes about 20 s here, too close to a loaded machine's time to tell apart by the clock). The
            // bound counts opening the store and starting the services too, and catches only a worker that
            // is slow to start at all.
            #expect(waited < .seconds(60), "the fresh entry waited \(waited)")
            #expect(backlogDelivered < 2_000, "the backlog had \(backlogDelivered) deliveries before the fresh entry")
        }
    }
}
