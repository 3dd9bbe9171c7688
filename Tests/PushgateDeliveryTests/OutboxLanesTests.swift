import Foundation
import PushgateCore
@testable import PushgateDelivery
import PushgateStore
import PushgateStoreSQLite
import Synchronization
import Testing

/// While front ends enqueue, the worker's helper lanes give way, so one round's deliveries at a time share
/// the machine with the answers to the senders; when the inflow pauses, the helpers deliver the backlog too.
@Suite("Outbox lanes")
struct OutboxLanesTests {
    @Test func aSignalIsRecentForItsPeriodOnly() async throws {
        let wakeUp = OutboxWakeUp()
        #expect(!wakeUp.signalled(within: .seconds(3_600)))
        wakeUp.signal()
        #expect(wakeUp.signalled(within: .seconds(60)))
        try await Task.sleep(for: .milliseconds(50))
        #expect(!wakeUp.signalled(within: .milliseconds(10)))
        #expect(wakeUp.signalled(within: .seconds(60)))
    }

    @Test func helperLanesGiveWayWhileFrontEndsEnqueueAndJoinWhenTheInflowPauses() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        // Each delivery takes 200 ms, so a round's hundred deliveries are in flight together for that long,
        // and one lane alone would take over 6 s for the backlog left when the inflow pauses.
        let provider = ScriptedProvider(appID: "app", delay: .milliseconds(200))
        let wakeUp = OutboxWakeUp()
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        var configuration = OutboxWorker.Configuration()
        configuration.lanes = 2
        configuration.pollInterval = .milliseconds(10)
        // Long enough that a thread a loaded machine holds up (the inflow's, below) does not look like a
        // pause in the inflow; short enough that the helper joins well before one lane is done.
        configuration.helperQuietPeriod = .seconds(3)
        // A starved machine may take longer than the usual patience over a round; a round detached then
        // would overlap the next one, which is not what this test is about.
        configuration.shortestRoundPatience = .seconds(60)
        // Nor is an entry whose hand-off lease ran short on a starved machine: it is left in the store, and
        // a round claims it beside its handed-over entry (two entries, 200 deliveries at once; CI saw it).
        configuration.lease = .seconds(600)
        let worker = OutboxWorker(
            dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration, logger: TestLogging.quiet
        )
        // An inflow under way before the worker starts: a signal every 50 ms, as enqueues give. From a
        // thread of its own: on a busy machine the tasks' shared threads can be held up for longer than
        // the quiet period, which would look like a pause in the inflow.
        wakeUp.signal()
        let inflowStopped = StopFlag()
        let inflow = Thread {
            while !inflowStopped.isSet {
                wakeUp.signal()
                usleep(50_000)
            }
        }
        inflow.start()
        defer { inflowStopped.set() }
        // 4,000 tokens: all fit the hand-off (4,096), so every round takes one handed-over entry and
        // claims nothing from the store.
        let entries = 40
        try await DispatcherAndOutboxTests.running([store, worker]) { () async throws in
            for entry in 0..<entries {
                try await dispatcher.enqueue(DispatcherAndOutboxTests.notification, appID: "app", frontEnd: "test", tokens: (0..<100).map { "e\(entry)-\($0)" })
            }
            // One lane: a round is one 100-token entry, and no second round's deliveries join it.
            #expect(try await DispatcherAndOutboxTests.eventually { provider.deliveredTokens.count >= 800 })
            #expect(provider.peakInFlight == 100)
            // The inflow pauses: the helper lane joins in within its quiet period, two rounds at once.
            inflowStopped.set()
            provider.resetPeakInFlight()
            #expect(try await DispatcherAndOutboxTests.eventually { () async throws in try await store.pendingCount() == 0 })
            #expect(provider.peakInFlight > 100)
            #expect(provider.deliveredTokens.count == entries * 100)
            #expect(Set(provider.deliveredTokens).count == entries * 100)
        }
    }
}

/// A flag one thread sets and another reads.
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { self.value.load(ordering: .relaxed) }

    func set() { self.value.store(true, ordering: .relaxed) }
}
