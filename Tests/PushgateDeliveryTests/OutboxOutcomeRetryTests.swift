import Foundation
import PushgateCore
@testable import PushgateDelivery
import PushgateStore
@testable import PushgateStoreSQLite
import PushgateTestSupport
import Testing

/// A round's outcome the store refuses for a moment (a database slow past the call's deadline) is written
/// again, so the entry is not claimed and delivered a second time when its lease ends.
@Suite("Outbox outcomes written again")
struct OutboxOutcomeRetryTests {
    @Test func anOutcomeTheStoreRefusedForAMomentIsWrittenAgain() async throws {
        let (sqlite, _) = try await DispatcherAndOutboxTests.openStore()
        // As `pushgate serve` wraps it, with a short deadline: a call that waits for the writer fails.
        let store = BoundedStore(sqlite, timeout: .milliseconds(200))
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let provider = ScriptedProvider(appID: "app")
        provider.gate.close()
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        var configuration = OutboxWorker.Configuration()
        configuration.lease = .seconds(6)
        configuration.deliveryTimeout = .seconds(2)
        configuration.pollInterval = .milliseconds(50)
        // Past the second a timed-out call keeps the store's circuit open.
        configuration.recordRetryPauses = [.milliseconds(1200), .milliseconds(1200)]
        configuration.recordRetryMargin = .seconds(1)
        let worker = OutboxWorker(
            dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration, logger: TestLogging.quiet
        )
        try await DispatcherAndOutboxTests.running([store, worker]) {
            try await dispatcher.enqueue(DispatcherAndOutboxTests.notification, appID: "app", frontEnd: "test", tokens: ["once"])
            let asked = ContinuousClock.now + .seconds(20)
            while provider.deliveredTokens.isEmpty, ContinuousClock.now < asked { try await Task.sleep(for: .milliseconds(10)) }
            #expect(provider.deliveredTokens == ["once"])
            // The writer is held for 600 ms while the delivery finishes: the first write of its outcome
            // misses its 200 ms deadline.
            let (entered, signal) = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                try await sqlite.writes.run {
                    signal.yield()
                    try await Task.sleep(for: .milliseconds(600))
                }
            }
            var iterator = entered.makeAsyncIterator()
            _ = await iterator.next()
            provider.gate.open()
            try await holder.value
            // Past the lease's end, with claims every 50 ms.
            try await Task.sleep(for: .seconds(7))
            #expect(provider.deliveredTokens == ["once"], "delivered again after its lease ended")
            #expect(try await sqlite.pendingCount() == 0)
        }
    }
}
