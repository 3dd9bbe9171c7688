import Foundation
import Hummingbird
import Logging
import PushgateConfig
import PushgateSandbox
@testable import PushgateStatus
import PushgateStatusWire
import PushgateTestSupport
import PushgateWaku
import Synchronization
import Testing

/// The server against an emulated nwaku node (REST, over loopback) whose relay cache holds 8 messages: a
/// burst of 60 messages for others around 6 registrations evicts the registrations before any poll reads
/// them, and the server still answers all 6, from the node's store.
@Suite("Status store backfill against an emulated node")
struct StatusBackfillBurstTests {
    static let pubsub = "/waku/2/rs/16/32"

    @Test func aBurstLargerThanTheCacheLosesNoRegistration() async throws {
        let emulator = WakuNetworkEmulator(logger: .quiet)
        let node = emulator.makeNode(name: "server", cacheCapacity: 8)
        let port = try #require(FreePort.pick())
        let application = node.makeApplication(host: "127.0.0.1", port: port)
        try await RunningServices.with([application]) {
            let client = WakuRESTClient(baseURL: "http://127.0.0.1:\(port)", timeout: .seconds(5))
            let log = LogRecorder()
            let logger = log.logger()
            let fixture = try BackfillFixture(relay: client, logger: logger)
            var settings = StatusSettings(wakuRESTURL: "http://127.0.0.1:\(port)")
            settings.pollInterval = .milliseconds(20)
            settings.wakuCacheCapacity = 8
            let poller = StatusWakuPoller(
                relay: client, archive: client, processor: fixture.processor, topics: fixture.topics, store: fixture.store, settings: settings,
                metrics: fixture.statusMetrics, logger: logger
            )
            let task = Task { try await poller.run() }
            defer { task.cancel() }
            // Subscribed, and the start-up catching up done (the store was empty).
            let deadline = ContinuousClock.now + .seconds(120)
            while node.storeQueryCount < 1 || !log.all.map(\.message).contains(where: { $0.hasPrefix("status: subscribed") }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(node.storeQueryCount >= 1)

            // 30 messages for others, 6 registrations, 30 more; newer timestamps last, so the cache keeps the
            // last 8 of the others and drops the registrations.
            let base = StatusMessageProcessor.nowNanoseconds()
            var burst: [WakuEmulatedMessage] = []
            var clients: [TestClient] = []
            func add(_ message: WakuMessage) {
                burst.append(
                    WakuEmulatedMessage(
                        pubsubTopic: Self.pubsub, payload: message.payload, contentTopic: message.contentTopic, version: 1,
                        timestamp: base + Int64(burst.count) * 1_000
                    )
                )
            }
            for index in 0..<30 {
                // Some on the server's own topic (a partition it shares with other keys), most elsewhere.
                let topic = index % 5 == 0 ? fixture.identity.partitionedContentTopic : String(format: "/waku/1/0x%08x/rfc26", index)
                add(BackfillFixture.junk(index, contentTopic: topic, timestamp: 0))
            }
            for _ in 0..<6 {
                let (message, registrant) = try fixture.registration(timestamp: 0)
                add(message)
                clients.append(registrant)
            }
            for index in 30..<60 { add(BackfillFixture.junk(index, contentTopic: String(format: "/waku/1/0x%08x/rfc26", index), timestamp: 0)) }
            // At once: a poll between two messages (a busy machine slows the loop) could read a registration
            // before the cache drops it.
            emulator.inject(contentsOf: burst)
            #expect(node.evictedCount > 0, "the cache overflowed")

            func answers() -> [WakuMessage] {
                emulator.published.filter { $0.contentTopic != fixture.identity.personalContentTopic }.map {
                    WakuMessage(payload: $0.payload, contentTopic: $0.contentTopic, version: $0.version, timestamp: $0.timestamp)
                }
            }
            while clients.contains(where: { !BackfillFixture.answered($0, in: answers()) }), ContinuousClock.now < deadline + .seconds(60) {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(clients.filter { BackfillFixture.answered($0, in: answers()) }.count == 6, "every registration answered")
            // The catch-up counts what it recovered once its whole page is handled, after the answers went out.
            while fixture.metrics.value("pushgate_status_backfill_messages_recovered_total") < 1, ContinuousClock.now < deadline + .seconds(60) {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(fixture.metrics.value(#"pushgate_status_backfills_total{reason="full_cache"}"#) >= 1)
            #expect(fixture.metrics.value("pushgate_status_backfill_messages_recovered_total") >= 1)
            #expect(fixture.metrics.value(#"pushgate_status_registrations_total{result="registered"}"#) == 6, "each handled once")
            task.cancel()
            _ = try? await task.value
        }
    }
}
