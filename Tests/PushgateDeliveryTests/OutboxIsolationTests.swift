import Foundation
import PushgateCore
import PushgateDelivery
import PushgateStoreSQLite
import Synchronization
import Testing

/// One app's provider hangs (accepts, never answers) while both apps get a steady stream through the
/// outbox: the other app's deliveries go on as before, and everything accepted for the hanging app is
/// delivered once its provider answers again.
@Suite("Outbox isolation between apps")
struct OutboxIsolationTests {
    /// The 99th percentile of `values`.
    static func p99(_ values: [Duration]) -> Duration {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
    }

    @Test(.timeLimit(.minutes(3)))
    func aHangingProviderDoesNotSlowAnotherAppAndLosesNothing() async throws {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        let hanging = ScriptedProvider(appID: "a")
        let healthy = ScriptedProvider(appID: "b")
        let wakeUp = OutboxWakeUp()
        let metrics = DeliveryMetrics(factory: NoMetrics.factory)
        let dispatcher = Dispatcher(
            directory: ProviderDirectory([hanging, healthy]), store: store, metrics: metrics, wakeUp: wakeUp, logger: TestLogging.quiet
        )
        var configuration = OutboxWorker.Configuration()
        configuration.retry = RetryPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(1), maximumAge: .seconds(600))
        let worker = OutboxWorker(
            dispatcher: dispatcher, store: store, metrics: metrics, wakeUp: wakeUp, configuration: configuration, logger: TestLogging.quiet
        )
        let queuedForA = Mutex<[String]>([])
        try await DispatcherAndOutboxTests.running([store, worker]) { () async throws in
            /// One notification for each app every 10 ms for `duration`; returns when each `b` token was queued.
            func steadyLoad(_ phase: String, for duration: Duration) async throws -> [String: ContinuousClock.Instant] {
                var queued: [String: ContinuousClock.Instant] = [:]
                let end = ContinuousClock.now + duration
                var index = 0
                while ContinuousClock.now < end {
                    try await dispatcher.enqueue(DispatcherAndOutboxTests.notification, appID: "a", frontEnd: "test", tokens: ["\(phase)-a\(index)"])
                    queuedForA.withLock { $0.append("\(phase)-a\(index)") }
                    let token = "\(phase)-b\(index)"
                    queued[token] = ContinuousClock.now
                    try await dispatcher.enqueue(DispatcherAndOutboxTests.notification, appID: "b", frontEnd: "test", tokens: [token])
                    index += 1
                    try await Task.sleep(for: .milliseconds(10))
                }
                return queued
            }
            /// How long each `b` token waited from its enqueue to its delivery.
            func latencies(_ queued: [String: ContinuousClock.Instant]) async throws -> [Duration] {
                #expect(try await DispatcherAndOutboxTests.eventually(timeout: .seconds(30)) {
                    Set(healthy.firstCalls.keys).isSuperset(of: queued.keys)
                })
                let calls = healthy.firstCalls
                return queued.compactMap { token, at in calls[token].map { $0 - at } }
            }

            // A busy machine's load changes between the healthy and the hanging phase (the whole suite runs
            // in parallel), so a pair of phases that misses the target is measured again, up to three times:
            // a lane waiting on the hung app's rounds misses it every time, by seconds (3.1 s before rounds
            // were split per app).
            var figures: [(before: Duration, during: Duration)] = []
            for attempt in 1...3 {
                let baseline = try await latencies(try await steadyLoad("healthy\(attempt)", for: .seconds(2)))
                hanging.gate.close()
                let hung = try await latencies(try await steadyLoad("hung\(attempt)", for: .seconds(4)))
                hanging.gate.open()
                let (before, during) = (Self.p99(baseline), Self.p99(hung))
                figures.append((before, during))
                print("b's p99 delivery latency: \(before) with a healthy, \(during) with a hanging (attempt \(attempt))")
                #expect(try await DispatcherAndOutboxTests.eventually(timeout: .seconds(60)) { () async throws in
                    try await store.pendingCount() == 0
                })
                // Within twice the healthy figure; the 20 ms beside it absorbs a busy machine's timer noise
                // when the healthy figure is a few milliseconds.
                if during <= before * 2 + .milliseconds(20) { break }
            }
            #expect(figures.contains { $0.during <= $0.before * 2 + .milliseconds(20) }, "p99s: \(figures)")

            let accepted = Set(queuedForA.withLock { $0 })
            let delivered = hanging.deliveredTokens
            #expect(Set(delivered).isSuperset(of: accepted))
            // Each hung token was sent once: the held calls finished, and what was refused at once by the
            // in-flight cap went again later without having reached the provider.
            #expect(delivered.count == Set(delivered).count, "\(delivered.count) calls for \(Set(delivered).count) tokens")
        }
    }
}
