import CoreMetrics
import Foundation
import Logging
import PushgateConfig
@testable import PushgateStatus
import PushgateStatusWire
import PushgateTestSupport
import Synchronization
import Testing

/// The poll loop against a scripted node: it retries the subscription while the node initialises,
/// subscribes again when the node forgot it, backs off after failed polls, warns when a poll comes back as
/// full as nwaku's default cache, and drops what is not for the server.
@Suite("Status poll loop")
struct StatusWakuPollerTests {
    /// A node that answers from a script, then with empty polls.
    final class ScriptedRelay: WakuRelay {
        enum Step: Sendable {
            case messages([WakuMessage])
            case failure(WakuRelayError)
        }
        let subscribeFailures = Mutex<[WakuRelayError]>([])
        let polls = Mutex<[Step]>([])
        let subscriptions = Atomic<Int>(0)
        let pollCount = Atomic<Int>(0)

        func subscribe(pubsubTopic: String) async throws(WakuRelayError) {
            if let failure = self.subscribeFailures.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw failure }
            self.subscriptions.add(1, ordering: .relaxed)
        }

        func poll(pubsubTopic: String) async throws(WakuRelayError) -> [WakuMessage] {
            self.pollCount.add(1, ordering: .relaxed)
            switch self.polls.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            case .messages(let messages)?: return messages
            case .failure(let error)?: throw error
            case nil: return []
            }
        }

        func publish(_ message: WakuMessage, pubsubTopic: String) async throws(WakuRelayError) {}
    }

    /// A poller over `relay` that logs to `log`, polling every 20 ms.
    static func poller(relay: ScriptedRelay, log: LogRecorder) throws -> StatusWakuPoller {
        let logger = log.logger()
        let identity = StatusServerIdentity(privateKey: try Secp256k1.PrivateKey())
        let store = MemoryStatusStore()
        let topics = StatusListeningTopics(identity: identity)
        let metrics = StatusMetrics(factory: NOOPMetricsHandler.instance)
        let processor = StatusMessageProcessor(
            pubsubTopic: "/waku/2/rs/16/32", storeIsShared: false, topics: topics, store: store, relay: relay, answer: StatusAnswer(identity: identity),
            registrations: StatusRegistrationHandler(identity: identity, store: store, topics: topics, logger: logger),
            queries: StatusQueryHandler(store: store, logger: logger),
            pushRequests: StatusPushRequestHandler(store: store, delivery: RecordingSink(), logger: logger), metrics: metrics, logger: logger
        )
        var settings = StatusSettings(wakuRESTURL: "http://127.0.0.1:1")
        settings.pollInterval = .milliseconds(20)
        return StatusWakuPoller(relay: relay, archive: nil, processor: processor, topics: topics, store: store, settings: settings, metrics: metrics, logger: logger)
    }

    @Test func theLoopRecoversFromANodeThatIsStartingOrForgetsAndWarnsOfFullPolls() async throws {
        let relay = ScriptedRelay()
        relay.subscribeFailures.withLock { $0 = [.initializing, .unreachable("refused")] }
        let junk = (0..<50).map { index in
            WakuMessage(payload: [UInt8(index)], contentTopic: "/waku/1/0x0000000\(index % 10)/rfc26", timestamp: Int64(index))
        }
        relay.polls.withLock { $0 = [.failure(.unreachable("timeout")), .messages(junk), .failure(.notSubscribed), .messages([])] }
        let log = LogRecorder()
        let poller = try Self.poller(relay: relay, log: log)
        let task = Task { try await poller.run() }
        defer { task.cancel() }
        let deadline = ContinuousClock.now + .seconds(120)
        while relay.polls.withLock({ !$0.isEmpty }) || relay.pollCount.load(ordering: .relaxed) < 6, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        _ = try? await task.value
        let logged = log.all.map(\.message)
        #expect(relay.subscriptions.load(ordering: .relaxed) == 2, "subscribed after two failures, and again when the node forgot")
        #expect(logged.filter { $0.hasPrefix("status: cannot subscribe on the Waku node yet") }.count == 2)
        #expect(logged.contains { $0.hasPrefix("status: polling the Waku node failed") })
        #expect(logged.contains { $0.hasPrefix("status: the Waku node forgot the subscription") })
        #expect(logged.contains { $0.hasPrefix("status: a poll returned 50 messages") })
        #expect(!logged.contains { $0.contains("error") && $0.hasPrefix("status: cannot build") })
    }

    /// A node that is not listening yet when the gateway starts (the built-in sandbox's, started beside it)
    /// is information; one that stays unreachable past the grace is a warning.
    @Test(arguments: [(Duration.seconds(5), Logger.Level.info), (Duration.zero, .warning)])
    func aNodeNotListeningYetIsAWarningOnlyPastTheGrace(grace: Duration, level: Logger.Level) async throws {
        let relay = ScriptedRelay()
        relay.subscribeFailures.withLock { $0 = [.unreachable("refused")] }
        let log = LogRecorder()
        var poller = try Self.poller(relay: relay, log: log)
        poller.subscribeGrace = grace
        let task = Task { [poller] in try await poller.run() }
        defer { task.cancel() }
        let deadline = ContinuousClock.now + .seconds(60)
        while relay.subscriptions.load(ordering: .relaxed) < 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        task.cancel()
        _ = try? await task.value
        let logged = log.all
        #expect(relay.subscriptions.load(ordering: .relaxed) == 1)
        let levels = logged.filter { $0.message == "status: cannot subscribe on the Waku node yet" }.map(\.level)
        #expect(levels == [level], "\(logged)")
    }
}
