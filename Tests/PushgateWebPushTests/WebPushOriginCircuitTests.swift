import Foundation
import Logging
import Prometheus
import PushgateCore
import PushgateProviderSupport
import PushgateTestSupport
@testable import PushgateWebPush
import Synchronization
import Testing

/// One push service failing request after request is left alone, while the app's other push services are
/// still served.
@Suite("Web Push circuits per push service")
struct WebPushOriginCircuitTests {
    static let notification = PushNotification(kind: .alert, priority: .high, payload: .object(["event_id": .string("$e")]))

    static func isRetryLater(_ outcome: DeliveryOutcome) -> Bool {
        if case .retryLater = outcome { true } else { false }
    }

    @Test func aFailingPushServiceIsLeftAloneWhileAnotherIsServedAndProbedUntilItAnswers() async throws {
        let healthy = Mutex(false)
        let failing = try await ScriptedHTTP1Server { _ in
            healthy.withLock { $0 } ? .answer(status: 201, body: "", close: false) : .answer(status: 503, body: "", close: false)
        }
        // Open 3 s at first: room for a loaded machine between the circuit opening and the checks below.
        var settings = OriginCircuits.Settings()
        settings.initialOpen = .seconds(3)
        let registry = PrometheusCollectorRegistry()
        @Sendable func failingServices() -> String? {
            String(decoding: registry.emitToBuffer(), as: UTF8.self).split(separator: "\n")
                .first { $0.hasPrefix("pushgate_push_services_failing{") }.map { String($0.split(separator: " ").last ?? "") }
        }
        try await WebPushProviderTests.withProvider(circuits: settings, metricsFactory: PrometheusMetricsFactory(registry: registry)) { harness in
            #expect(failingServices().flatMap(Double.init) == 0)
            let down = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(failing.port)/push/a")
            let up = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            // Five failures in a row open the failing service's circuit.
            for _ in 0..<5 {
                #expect(Self.isRetryLater(await harness.provider.deliver(Self.notification, to: down, deadline: WebPushProviderTests.soon())))
            }
            #expect(failing.snapshot.heads.count == 5)
            #expect(harness.logs.messages(atLeast: .notice).contains("push service failing; its deliveries wait"))
            #expect(failingServices().flatMap(Double.init) == 1)
            // Its deliveries are answered at once, without a request; the other service's go on.
            for _ in 0..<3 {
                #expect(Self.isRetryLater(await harness.provider.deliver(Self.notification, to: down, deadline: WebPushProviderTests.soon())))
            }
            #expect(failing.snapshot.heads.count == 5)
            for _ in 0..<3 {
                #expect(await harness.provider.deliver(Self.notification, to: up, deadline: WebPushProviderTests.soon()) == .delivered)
            }
            #expect(await harness.recorder.requests.count == 3)
            // Once it recovers, the first delivery after the interval probes it and closes the circuit.
            healthy.withLock { $0 = true }
            let limit = ContinuousClock.now + .seconds(30)
            var outcome = await harness.provider.deliver(Self.notification, to: down, deadline: WebPushProviderTests.soon())
            while outcome != .delivered, ContinuousClock.now < limit {
                try await Task.sleep(for: .milliseconds(100))
                outcome = await harness.provider.deliver(Self.notification, to: down, deadline: WebPushProviderTests.soon())
            }
            #expect(outcome == .delivered)
            #expect(failing.snapshot.heads.count == 6)
            #expect(harness.logs.messages(atLeast: .notice).contains("push service answering again"))
            #expect(failingServices().flatMap(Double.init) == 0)
            #expect(await harness.provider.deliver(Self.notification, to: down, deadline: WebPushProviderTests.soon()) == .delivered)
            #expect(failing.snapshot.heads.count == 7)
        }
        try await failing.close()
    }

    /// A push service that accepts requests and never answers holds at most three quarters of the app's
    /// request slots (`max_connections` 4: three) until the requests' deadlines; a delivery to another
    /// push service meanwhile goes at once, where before it waited for a slot behind them.
    @Test func aHungPushServiceLeavesSlotsToTheOthers() async throws {
        let hung = try await ScriptedHTTP1Server { _ in .ignore }
        try await WebPushProviderTests.withProvider(extra: ["allowed_endpoints: ['127.0.0.1:*']", "max_connections: 4"]) { harness in
            let down = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(hung.port)/push/hung")
            let up = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            let waiting = Task {
                await withTaskGroup(of: DeliveryOutcome.self) { group in
                    for _ in 0..<6 {
                        group.addTask { await harness.provider.deliver(Self.notification, to: down, deadline: .now + .seconds(20)) }
                    }
                    return await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
                }
            }
            let limit = ContinuousClock.now + .seconds(5)
            while hung.snapshot.heads.count < 3, ContinuousClock.now < limit { try await Task.sleep(for: .milliseconds(20)) }
            #expect(hung.snapshot.heads.count == 3)
            let started = ContinuousClock.now
            #expect(await harness.provider.deliver(Self.notification, to: up, deadline: .now + .seconds(15)) == .delivered)
            // A free slot answers in milliseconds. Waiting behind the hung requests lasts until their
            // deadline, at least 15 s from here (20 s less the 5 s the wait above may take), and so past this
            // delivery's own deadline: 10 s separates the two with room for a loaded machine.
            #expect(ContinuousClock.now - started < .seconds(10))
            let outcomes = await waiting.value
            #expect(outcomes.allSatisfy(Self.isRetryLater))
        }
        try await hung.close()
    }

    /// A hung push service has at most half the app's in-flight deliveries (`inflight_request_limit` 8:
    /// four, three running and one waiting): more are turned away at once as retry later, and a delivery to
    /// another push service still finds room under the limit, where before the hung service's waiters took
    /// all of it and that delivery was refused.
    @Test func aHungPushServicesLineLeavesInFlightRoomToTheOthers() async throws {
        let hung = try await ScriptedHTTP1Server { _ in .ignore }
        let extra = ["allowed_endpoints: ['127.0.0.1:*']", "max_connections: 4", "inflight_request_limit: 8"]
        try await WebPushProviderTests.withProvider(extra: extra) { harness in
            let down = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(hung.port)/push/hung")
            let up = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/ok")
            let finished = FinishedDeliveries()
            let waiting = Task {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<10 {
                        group.addTask {
                            let outcome = await harness.provider.deliver(Self.notification, to: down, deadline: .now + .seconds(12))
                            finished.outcomes.withLock { $0.append(outcome) }
                        }
                    }
                }
            }
            // Three running and one waiting: the other six are turned away without waiting, by the hung
            // service's full line or (those that came when eight were in flight) the in-flight limit.
            let limit = ContinuousClock.now + .seconds(8)
            while finished.outcomes.withLock({ $0.count }) < 6, ContinuousClock.now < limit { try await Task.sleep(for: .milliseconds(20)) }
            let early = finished.outcomes.withLock { $0 }
            #expect(early.count == 6)
            #expect(early.allSatisfy(Self.isRetryLater))
            let turnedAway = early.filter { $0 == .retryLater(after: nil, reason: "too many requests to this push service are waiting already") }
            #expect(turnedAway.count >= 4, "\(early)")
            while hung.snapshot.heads.count < 3, ContinuousClock.now < limit { try await Task.sleep(for: .milliseconds(20)) }
            #expect(hung.snapshot.heads.count == 3)
            #expect(await harness.provider.deliver(Self.notification, to: up, deadline: .now + .seconds(5)) == .delivered)
            await waiting.value
            #expect(finished.outcomes.withLock { $0.count } == 10)
            #expect(finished.outcomes.withLock { $0.allSatisfy(Self.isRetryLater) })
        }
        try await hung.close()
    }

    /// Answers that are about the subscription or the message (404, 410, 413, 400) show the service
    /// working: they never open its circuit.
    @Test func refusalsOfSubscriptionsDoNotOpenTheCircuit() async throws {
        try await WebPushProviderTests.withProvider { harness in
            let gone = TestFixtures.Subscriber().token(endpoint: "http://127.0.0.1:\(harness.port)/sub/gone")
            for _ in 0..<8 {
                #expect(await harness.provider.deliver(Self.notification, to: gone, deadline: WebPushProviderTests.soon()) != .delivered)
            }
            #expect(await harness.recorder.requests.count == 8)
            #expect(!harness.logs.messages(atLeast: .notice).contains("push service failing; its deliveries wait"))
        }
    }
}

/// Outcomes of deliveries as they finish, in order.
private final class FinishedDeliveries: Sendable {
    let outcomes = Mutex<[DeliveryOutcome]>([])
}
