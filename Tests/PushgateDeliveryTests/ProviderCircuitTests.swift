import Foundation
import Logging
import Prometheus
import PushgateCore
import PushgateDelivery
import PushgateTestSupport
import Testing

/// The per-app circuit: a provider that keeps failing has its deliveries fail at once, one probe goes
/// through when the interval ends, a success closes it, and other apps never notice.
@Suite("Provider circuit")
struct ProviderCircuitTests {
    static let notification = PushNotification(payload: .object(["data": .object(["k": .string("v")])]))
    static let down = DeliveryOutcome.retryLater(after: nil, reason: "connection refused")

    static func dispatcher(
        _ providers: [ScriptedProvider], metrics: DeliveryMetrics = DeliveryMetrics(factory: NoMetrics.factory), logger: Logger = TestLogging.quiet
    ) async throws -> Dispatcher {
        let (store, _) = try await DispatcherAndOutboxTests.openStore()
        return Dispatcher(directory: ProviderDirectory(providers), store: store, metrics: metrics, logger: logger)
    }

    @Test func fiveFailuresInARowOpenTheCircuitAndLaterDeliveriesFailWithoutReachingTheProvider() async throws {
        let failing = ScriptedProvider(appID: "failing", script: ["t": [Self.down]])
        let healthy = ScriptedProvider(appID: "healthy")
        let dispatcher = try await Self.dispatcher([failing, healthy])
        for _ in 0..<5 {
            #expect(await dispatcher.deliver(Self.notification, appID: "failing", token: "t", timeout: .seconds(5)) == Self.down)
        }
        #expect(failing.deliveredTokens.count == 5)
        for _ in 0..<20 {
            guard case .retryLater(let after, let reason) = await dispatcher.deliver(Self.notification, appID: "failing", token: "t", timeout: .seconds(5)) else {
                Issue.record("an open circuit answers retry later")
                return
            }
            #expect(reason == "the provider of failing is failing (circuit open)")
            // It says when to try again: at most the first interval (1 s) away.
            #expect(after.map { $0 > .zero && $0 <= .seconds(1) } == true)
        }
        #expect(failing.deliveredTokens.count == 5)
        #expect(await dispatcher.deliver(Self.notification, appID: "healthy", token: "u", timeout: .seconds(5)) == .delivered)
    }

    @Test func aProviderOfManyServersNeverHasItsCircuitOpened() async throws {
        // A UnifiedPush app posts to any host: one host that is down must not hold up the others.
        let provider = ScriptedProvider(appID: "up", script: ["down": [Self.down]], sharesOneCircuit: false)
        let dispatcher = try await Self.dispatcher([provider])
        for _ in 0..<10 {
            #expect(await dispatcher.deliver(Self.notification, appID: "up", token: "down", timeout: .seconds(5)) == Self.down)
        }
        #expect(await dispatcher.deliver(Self.notification, appID: "up", token: "elsewhere", timeout: .seconds(5)) == .delivered)
        #expect(provider.deliveredTokens.count == 11)
    }

    /// The state is a metric: `pushgate_provider_circuit_open` 1 while open, the openings and the
    /// deliveries refused meanwhile counted.
    @Test func aProbeAfterTheIntervalClosesTheCircuitWhenTheProviderIsBack() async throws {
        let provider = ScriptedProvider(appID: "app", script: ["t": [Self.down, Self.down, Self.down, Self.down, Self.down, .delivered]])
        let registry = PrometheusCollectorRegistry()
        let metrics = DeliveryMetrics(factory: PrometheusMetricsFactory(registry: registry))
        metrics.prepare(appIDs: ["app"])
        let dispatcher = try await Self.dispatcher([provider], metrics: metrics)
        func value(_ metric: String) -> Double? { OutboxBacklogSamplerTests.value(registry, metric, app: "app") }
        #expect(value("pushgate_provider_circuit_open") == 0)
        #expect(value("pushgate_provider_circuit_opened_total") == 0)
        for _ in 0..<5 { _ = await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) }
        guard case .retryLater = await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) else {
            Issue.record("expected an open circuit")
            return
        }
        #expect(value("pushgate_provider_circuit_open") == 1)
        #expect(value("pushgate_provider_circuit_opened_total") == 1)
        #expect(value("pushgate_provider_circuit_refusals_total") == 1)
        // The refused delivery counts as retry later with the five the provider answered (on /metrics, and
        // in the console's counts).
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains(#"pushgate_deliveries_total{app="app",outcome="retry_later"} 6"#), "\(text)")
        try await Task.sleep(for: .milliseconds(1_100))
        #expect(await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) == .delivered)
        #expect(provider.deliveredTokens.count == 6)
        #expect(value("pushgate_provider_circuit_open") == 0)
        #expect(value("pushgate_provider_circuit_opened_total") == 1)
        // Closed: every delivery reaches the provider again.
        for _ in 0..<10 {
            #expect(await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) == .delivered)
        }
        #expect(provider.deliveredTokens.count == 16)
    }

    @Test func aFailedProbeOpensTheCircuitForLongerAndOnlyOneProbeGoesAtATime() async throws {
        let provider = ScriptedProvider(appID: "app", script: ["t": [Self.down]], delay: .milliseconds(300))
        let log = LogRecorder()
        let dispatcher = try await Self.dispatcher([provider], logger: log.logger())
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { _ = await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) } }
        }
        try await Task.sleep(for: .milliseconds(1_100))
        // Three deliveries at once when the interval has ended: one probes, two fail at once.
        let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
            for _ in 0..<3 { group.addTask { await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(provider.deliveredTokens.count == 6)
        #expect(outcomes.filter { $0 == Self.down }.count == 1)
        // The probe failed: open again, now for 2 s (the first interval was 1 s), as the warnings of the two
        // openings say. (Read there rather than from the pause a later delivery is told, which shrinks by
        // however long a loaded machine takes to ask.)
        let openings = log.all.filter { $0.message.hasPrefix("provider failing") }.map { $0.metadata["probe_in"] ?? "" }
        #expect(openings == ["\(Duration.seconds(1))", "\(Duration.seconds(2))"])
        // A delivery fails at once, told to come back within those 2 s. (Asked at once rather than after a
        // sleep, which a loaded machine can stretch past the interval.)
        let after = await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5))
        #expect(provider.deliveredTokens.count == 6)
        guard case .retryLater(let remaining?, _) = after else {
            Issue.record("expected retry later with a pause, got \(after)")
            return
        }
        #expect(remaining > .zero && remaining <= .seconds(2), "\(remaining)")
    }

    @Test func answersOtherThanRetryLaterKeepTheCircuitClosed() async throws {
        let provider = ScriptedProvider(appID: "app", script: [
            "t": [Self.down, Self.down, Self.down, Self.down, .rejected(reason: "BadTopic"), Self.down, Self.down, Self.down, Self.down, .delivered],
        ])
        let dispatcher = try await Self.dispatcher([provider])
        for _ in 0..<10 { _ = await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) }
        #expect(provider.deliveredTokens.count == 10)
    }

    @Test func anOpenCircuitKeepsThePauseTheProviderAskedFor() async throws {
        let busy = DeliveryOutcome.retryLater(after: .seconds(30), reason: "429")
        let provider = ScriptedProvider(appID: "app", script: ["t": [busy]])
        let dispatcher = try await Self.dispatcher([provider])
        for _ in 0..<5 { _ = await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) }
        guard case .retryLater(let after, _) = await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5)) else {
            Issue.record("expected an open circuit")
            return
        }
        #expect(after == .seconds(30))
        // No probe before the provider's pause has passed, though the circuit's own first interval is 1 s.
        try await Task.sleep(for: .milliseconds(1_100))
        _ = await dispatcher.deliver(Self.notification, appID: "app", token: "t", timeout: .seconds(5))
        #expect(provider.deliveredTokens.count == 5)
    }
}
