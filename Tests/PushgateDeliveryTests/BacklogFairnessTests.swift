import Foundation
import PushgateCore
import PushgateDelivery
import PushgateStore
import PushgateStoreSQLite
import Testing

/// A backlog of one app does not delay another app's notifications: the outbox worker's claims are
/// shared between the apps with due entries.
@Suite("Backlog fairness")
struct BacklogFairnessTests {
    /// 50,000 entries of app a are waiting when the worker starts (queued while no worker ran, so they are
    /// claimed from the store, not handed over in memory), and one of app b after them. a's deliveries
    /// take 100 ms each, so a worker taking entries oldest first reaches b only after 50,000 / 128 rounds
    /// on its 2 lanes: about 20 seconds. Shared claims deliver b in the first round.
    ///
    /// The goal is b delivered within a second of the worker starting; the test allows 5 seconds (a busy
    /// 2-core machine running a debug build) and checks the order too, without timing: when b is
    /// delivered, a has had at most a few rounds (fewer than 2,000 of its 50,000 tokens), where claims in
    /// due order would have handed out all 50,000 first.
    @Test func aFreshEntryOfOneAppIsDeliveredPromptlyBehindAnotherAppsBacklog() async throws {
        let (store, path) = try await DispatcherAndOutboxTests.openStore()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let busy = ScriptedProvider(appID: "app.a", delay: .milliseconds(100))
        let fresh = ScriptedProvider(appID: "app.b")
        let directory = ProviderDirectory([busy, fresh])
        let backlog = 50_000
        // Queued with no worker running: stored for any worker to claim.
        let queuing = Dispatcher(directory: directory, store: store, metrics: metrics, logger: TestLogging.quiet)
        try await DispatcherAndOutboxTests.running([store]) { () async throws in
            for chunk in stride(from: 0, to: backlog, by: 5_000) {
                try await queuing.enqueue(
                    (chunk..<chunk + 5_000).map { Dispatcher.Queued(DispatcherAndOutboxTests.notification, appID: "app.a", tokens: ["a-\($0)"]) }
                )
            }
            try await queuing.enqueue(DispatcherAndOutboxTests.notification, appID: "app.b", tokens: ["b"])
            #expect(try await store.pendingCount() == backlog + 1)
        }

        let (reopened, _) = try await DispatcherAndOutboxTests.openStore(at: path)
        let wakeUp = OutboxWakeUp()
        let dispatcher = Dispatcher(directory: directory, store: reopened, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        let worker = OutboxWorker(dispatcher: dispatcher, store: reopened, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        let started = ContinuousClock.now
        try await DispatcherAndOutboxTests.running([reopened, worker]) { () async throws in
            #expect(try await DispatcherAndOutboxTests.eventually(timeout: .seconds(120)) { fresh.deliveredTokens == ["b"] })
            let waited = ContinuousClock.now - started
            let backlogDelivered = busy.deliveredTokens.count
            #expect(waited < .seconds(5), "app.b's entry waited \(waited)")
            #expect(backlogDelivered < 2_000, "app.a had \(backlogDelivered) deliveries before app.b's one")
        }
    }
}
