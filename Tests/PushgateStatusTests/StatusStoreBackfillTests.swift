import Foundation
import Logging
import PushgateConfig
@testable import PushgateStatus
import PushgateStatusWire
import PushgateTestSupport
import Synchronization
import Testing

/// Catching up from the node's store: every content topic asked, ten to a query, page by page through the
/// cursor, within the window limit; what was already handled (polled, or caught up before) is handled
/// once; a node without a store peer is logged once, counted, and does not stop polling.
@Suite("Status store backfill")
struct StatusStoreBackfillTests {
    static let second: Int64 = 1_000_000_000
    static let pubsub = "/waku/2/rs/16/32"

    func backfill(_ archive: any WakuStore, _ fixture: BackfillFixture, limit: Duration = .seconds(3_600), logger: Logger = .quiet) -> StatusStoreBackfill {
        StatusStoreBackfill(
            archive: archive, processor: fixture.processor, topics: fixture.topics, pubsubTopic: Self.pubsub, limit: limit, metrics: fixture.statusMetrics,
            logger: logger
        )
    }

    @Test func everyTopicIsAskedPageByPageAndWhatWasSeenIsHandledOnce() async throws {
        let relay = PublishRecordingRelay()
        let fixture = try BackfillFixture(relay: relay)
        for index in 0..<25 { fixture.topics.addQueryTopic(keyHash: Array(repeating: UInt8(index), count: 64)) }
        let now = StatusMessageProcessor.nowNanoseconds()
        let base = now - 60 * Self.second
        var messages = (0..<250).map { BackfillFixture.junk($0, contentTopic: fixture.identity.partitionedContentTopic, timestamp: base + Int64($0) * 1_000) }
        var clients: [TestClient] = []
        for index in 0..<3 {
            let (message, client) = try fixture.registration(timestamp: base + Int64(index) * 90_000 + 500)
            messages.append(message)
            clients.append(client)
        }
        messages.append(BackfillFixture.junk(0, contentTopic: "/waku/1/0x01020304/rfc26", timestamp: base))
        let archive = ScriptedStore(messages)
        // The poll loop took the first registration already.
        #expect(await fixture.processor.process(messages[250]) == .answered(16))
        #expect(relay.published.withLock { $0.count } == 1)

        let backfill = self.backfill(archive, fixture)
        // Its own two topics, the 25 query topics and the polled registrant's.
        let topics = fixture.topics.contentTopics
        #expect(topics.count == 28)
        let window = StatusBackfillPlanner.Window(start: base - Self.second, end: now + 30 * Self.second)
        #expect(await backfill.catchUp(window) == nil)
        let queries = archive.queries.withLock { $0 }
        #expect(queries.count == 5, "253 messages on the server's own topics: three pages; two more groups of query topics (10, 8): one each")
        #expect(queries.map(\.cursor) == [nil, "at-100", "at-200", nil, nil])
        #expect(queries.allSatisfy { $0.contentTopics.count <= 10 && $0.pageSize == 100 && $0.pubsubTopic == Self.pubsub })
        #expect(queries.allSatisfy { $0.startTime == window.start && $0.endTime == window.end })
        let firstPages = queries.filter { $0.cursor == nil }.flatMap(\.contentTopics)
        #expect(firstPages == topics, "each topic in one group, in order")
        let answers = relay.published.withLock { $0 }
        #expect(answers.count == 3, "the polled registration is not answered twice")
        #expect(clients.allSatisfy { BackfillFixture.answered($0, in: answers) })
        #expect(fixture.metrics.value("pushgate_status_backfill_queries_total") == 5)
        #expect(fixture.metrics.value("pushgate_status_backfill_messages_recovered_total") == 2)
        #expect(fixture.metrics.value("pushgate_status_messages_polled_total") == 1, "caught-up messages are not counted as polled")

        // The same window again: everything is a repeat.
        #expect(await backfill.catchUp(window) == nil)
        #expect(relay.published.withLock { $0.count } == 3)
        #expect(fixture.metrics.value("pushgate_status_backfill_messages_recovered_total") == 2)
    }

    /// A restarted server catches up on the last hour, which holds messages it handled before it stopped:
    /// a registration is not taken again (its hash was recorded in the store), so the client does not get
    /// a second answer, a version mismatch.
    @Test func aRestartedServerDoesNotAnswerARegistrationItHandledBeforeItStopped() async throws {
        let relay = PublishRecordingRelay()
        let before = try BackfillFixture(relay: relay)
        let now = StatusMessageProcessor.nowNanoseconds()
        let (handled, client) = try before.registration(timestamp: now - 120 * Self.second)
        let (missed, missedClient) = try before.registration(timestamp: now - 60 * Self.second)
        #expect(await before.processor.process(handled) == .answered(16))
        // The same server, restarted: same identity and store, nothing in memory.
        let after = try BackfillFixture(relay: relay, identity: before.identity, store: before.store)
        let error = await self.backfill(ScriptedStore([handled, missed]), after).catchUp(.init(start: now - 3_600 * Self.second, end: now))
        #expect(error == nil)
        let answers = relay.published.withLock { $0 }
        #expect(answers.count == 2, "one answer each")
        #expect(BackfillFixture.answered(client, in: answers) && BackfillFixture.answered(missedClient, in: answers))
        #expect(after.metrics.value(#"pushgate_status_registrations_total{result="version_mismatch"}"#) == 0)
        #expect(after.metrics.value("pushgate_status_messages_duplicate_total") == 1)
    }

    @Test func noQueryReachesBackFurtherThanTheLimitAndACursorGivenTwiceEndsTheTopics() async throws {
        /// Always the same page and cursor.
        final class LoopingStore: WakuStore {
            let queries = Mutex<[WakuStoreQuery]>([])
            func queryStore(_ query: WakuStoreQuery) async throws(WakuRelayError) -> WakuStorePage {
                self.queries.withLock { $0.append(query) }
                return WakuStorePage(messages: [BackfillFixture.junk(1, contentTopic: "/waku/1/0x01020304/rfc26", timestamp: 1)], cursor: "again")
            }
        }
        let fixture = try BackfillFixture(relay: PublishRecordingRelay())
        let archive = LoopingStore()
        let now = StatusMessageProcessor.nowNanoseconds()
        let error = await self.backfill(archive, fixture, limit: .seconds(600)).catchUp(.init(start: now - 7_200 * Self.second, end: now))
        #expect(error == nil)
        let queries = archive.queries.withLock { $0 }
        #expect(queries.map(\.cursor) == [nil, "again"], "stopped when the cursor came back")
        #expect(queries.allSatisfy { $0.startTime >= now - 600 * Self.second && $0.startTime < now - 590 * Self.second }, "cut to the last ten minutes")
        // A window entirely older than the limit asks nothing.
        #expect(await self.backfill(archive, fixture, limit: .seconds(600)).catchUp(.init(start: now - 7_200 * Self.second, end: now - 3_600 * Self.second)) == nil)
        #expect(archive.queries.withLock { $0.count } == 2)
    }

    @Test func aNodeWithoutAStorePeerIsLoggedOnceCountedAndPollingGoesOn() async throws {
        let relay = StatusWakuPollerTests.ScriptedRelay()
        let full = (0..<8).map { BackfillFixture.junk($0, contentTopic: "/waku/1/0x0000000\($0)/rfc26", timestamp: Int64($0 + 1)) }
        relay.polls.withLock { $0 = [.messages(full), .messages([]), .messages(full), .failure(.unreachable("down")), .messages([])] }
        let log = LogRecorder()
        let logger = log.logger()
        let fixture = try BackfillFixture(relay: relay, logger: logger)
        let archive = ScriptedStore([], refusal: .noStorePeer("No suitable service peer & no discovery method"))
        var settings = StatusSettings(wakuRESTURL: "http://127.0.0.1:1")
        settings.pollInterval = .milliseconds(20)
        settings.wakuCacheCapacity = 8
        var poller = StatusWakuPoller(
            relay: relay, archive: archive, processor: fixture.processor, topics: fixture.topics, store: fixture.store, settings: settings,
            metrics: fixture.statusMetrics, logger: logger
        )
        poller.backfillFirstPause = .milliseconds(50)
        poller.backfillLongestPause = .milliseconds(100)
        let started = ContinuousClock.now
        let task = Task { try await poller.run() }
        defer { task.cancel() }
        let deadline = ContinuousClock.now + .seconds(120)
        while archive.queryCount < 4, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let pollsThen = relay.pollCount.load(ordering: .relaxed)
        while relay.pollCount.load(ordering: .relaxed) < pollsThen + 10, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        task.cancel()
        _ = try? await task.value
        let elapsed = ContinuousClock.now - started
        let queries = archive.queryCount
        #expect(queries >= 4, "asked again after each pause")
        #expect(relay.pollCount.load(ordering: .relaxed) >= pollsThen + 10, "polling went on")
        #expect(Double(queries) <= elapsed / .milliseconds(100) + 3, "one query per pause at most: no busy loop")
        let logged = log.all.map(\.message)
        #expect(logged.filter { $0.hasPrefix("status: the Waku node has no store peer") }.count == 1)
        #expect(fixture.metrics.value(#"pushgate_status_store_errors_total{kind="no_store_peer"}"#) == queries)
        #expect(fixture.metrics.value(#"pushgate_status_backfills_total{reason="start_up"}"#) == 1)
        #expect(fixture.metrics.value(#"pushgate_status_backfills_total{reason="full_cache"}"#) == 2)
        #expect(fixture.metrics.value(#"pushgate_status_backfills_total{reason="gap"}"#) == 1, "the poll after the failed one")
    }
}
