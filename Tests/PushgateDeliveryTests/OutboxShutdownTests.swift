import Foundation
import Logging
import PushgateCore
import PushgateDelivery
import PushgateStore
import PushgateTestSupport
import Testing

/// A graceful shutdown stops the outbox worker mid-claim; that is no fault of the store and is not logged
/// as one.
@Suite("Outbox worker shutdown")
struct OutboxShutdownTests {
    @Test func stoppingMidClaimLogsNoWarning() async throws {
        let (sqlite, _) = try await DispatcherAndOutboxTests.openStore()
        // As `pushgate serve` wraps it: every call bounded, so a cancelled call ends as a cancellation.
        let store = BoundedStore(sqlite, timeout: .seconds(5))
        let log = LogRecorder()
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let provider = ScriptedProvider(appID: "app", script: [:])
        let dispatcher = Dispatcher(directory: ProviderDirectory([provider]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet)
        var configuration = OutboxWorker.Configuration()
        // Lanes that claim again and again, so a shutdown finds one claiming.
        configuration.pollInterval = .milliseconds(1)
        configuration.helperQuietPeriod = .milliseconds(1)
        configuration.lanes = 4
        let settings = configuration
        try await DispatcherAndOutboxTests.running([store]) {
            for _ in 0..<30 {
                let worker = OutboxWorker(
                    dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: settings, logger: log.logger()
                )
                try await DispatcherAndOutboxTests.running([worker]) {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        }
        #expect(log.messages(atLeast: .warning) == [])
    }
}
