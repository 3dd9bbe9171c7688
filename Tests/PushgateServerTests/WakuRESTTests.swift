import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushgateSandbox
import PushgateTestSupport
import PushgateStatusWire
import PushgateWaku
import Testing

/// The sandbox's nwaku REST emulator (paths, shapes, the shared cache and its eviction, relaying between
/// nodes, the store) and the gateway's REST client against it.
@Suite("Waku REST: the emulator and the client")
struct WakuRESTTests {
    static let topic = "/waku/2/rs/16/32"
    static let encoded = "%2Fwaku%2F2%2Frs%2F16%2F32"

    struct Answer {
        let status: Int
        let body: String
    }

    static func call(_ method: HTTPMethod, _ url: String, _ body: String? = nil, contentType: String = "application/json") async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        return Answer(status: Int(response.status.code), body: String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// Runs `count` nodes of one network; `body` gets their base URLs.
    static func withNodes(
        _ count: Int, capacity: Int = 50, seenWindow: Duration = .seconds(120), initializingFor: Duration = .zero,
        pollAnswerDelay: Duration = .zero, hasStorePeer: Bool = true, _ body: (WakuNetworkEmulator, [String], [WakuRESTNode]) async throws -> Void
    ) async throws {
        let network = WakuNetworkEmulator(cacheCapacity: capacity, seenWindow: seenWindow, logger: TestLogging.quiet)
        var ports: [Int] = []
        for _ in 0..<count { ports.append(try #require(FreePort.pick(avoiding: Set(ports)))) }
        let nodes = ports.indices.map { network.makeNode(name: "node-\($0)", initializingFor: initializingFor, pollAnswerDelay: pollAnswerDelay, hasStorePeer: hasStorePeer) }
        let applications = zip(nodes, ports).map { node, port in node.makeApplication(host: "127.0.0.1", port: port) }
        try await RunningServices.with(applications) {
            let urls = ports.map { "http://127.0.0.1:\($0)" }
            for url in urls {
                _ = try await StatusEndToEndTests.waitFor { (try? await Self.call(.GET, url + "/debug/v1/version")) != nil }
            }
            try await body(network, urls, nodes)
        }
    }

    @Test func subscriptionsPublishingAndPollingAsNwakuAnswers() async throws {
        try await Self.withNodes(3) { _, urls, _ in
            let (a, b, c) = (urls[0], urls[1], urls[2])
            #expect(try await Self.call(.POST, a + "/relay/v1/subscriptions", "[\"\(Self.topic)\"]").body == "OK")
            #expect(try await Self.call(.POST, b + "/relay/v1/subscriptions", "[\"\(Self.topic)\"]").status == 200)
            let invalid = try await Self.call(.POST, a + "/relay/v1/subscriptions", "[\"/waku/2/default-waku/proto\"]")
            #expect(invalid.status == 400 && invalid.body.hasPrefix("Invalid pubsub topic(s)"))
            let wrongType = try await Self.call(.POST, a + "/relay/v1/subscriptions", "[\"\(Self.topic)\"]", contentType: "text/html")
            #expect(wrongType.status == 400 && wrongType.body == "Wrong Content-Type, expected application/json or text/plain")

            let publish = try await Self.call(.POST, a + "/relay/v1/messages/" + Self.encoded, #"{"payload":"AQID","contentTopic":"/waku/1/0x01020304/rfc26","timestamp":1700000000000000123}"#)
            #expect(publish.status == 200 && publish.body == "OK")
            // The publisher's own node gets it back, so does every other subscribed node, in nwaku's key order.
            let expected = #"[{"payload":"AQID","contentTopic":"/waku/1/0x01020304/rfc26","version":0,"timestamp":1700000000000000123,"ephemeral":false,"proof":""}]"#
            #expect(try await Self.call(.GET, a + "/relay/v1/messages/" + Self.encoded).body == expected)
            #expect(try await Self.call(.GET, b + "/relay/v1/messages/" + Self.encoded).body == expected)
            #expect(try await Self.call(.GET, a + "/relay/v1/messages/" + Self.encoded).body == "[]", "a poll empties that node's cache only")
            let unsubscribed = try await Self.call(.GET, c + "/relay/v1/messages/" + Self.encoded)
            #expect(unsubscribed.status == 404 && unsubscribed.body.isEmpty)
            let notSubscribed = try await Self.call(.POST, c + "/relay/v1/messages/" + Self.encoded, #"{"payload":"AQID","contentTopic":"/t"}"#)
            #expect(notSubscribed.status == 400 && notSubscribed.body == "Failed to publish: Node not subscribed to topic: \(Self.topic)")

            // An unencoded topic matches no route; other unknown paths are bad requests.
            let raw = try await Self.call(.GET, a + "/relay/v1/messages" + Self.topic)
            #expect(raw.status == 404 && raw.body == "/relay endpoints are not available while initializing.")
            #expect(try await Self.call(.GET, a + "/nothing").status == 400)
            for bad in [#"{"payload":"AQI","contentTopic":"/t"}"#, #"{"payload":"","contentTopic":"/t"}"#, #"{"contentTopic":"/t"}"#, #"{"payload":"AQID"}"#, "nope"] {
                #expect(try await Self.call(.POST, a + "/relay/v1/messages/" + Self.encoded, bad).status == 400, "\(bad)")
            }
            // An absent timestamp is filled in, in nanoseconds.
            _ = try await Self.call(.POST, a + "/relay/v1/messages/" + Self.encoded, #"{"payload":"AQID","contentTopic":"/t","version":1,"meta":"AA=="}"#)
            let filled = try await Self.call(.GET, a + "/relay/v1/messages/" + Self.encoded).body
            #expect(filled.contains("\"version\":1") && filled.contains("\"meta\":\"AA==\""))
            let health = try await Self.call(.GET, a + "/health")
            #expect(health.body.contains("\"nodeHealth\":\"READY\""))
        }
    }

    @Test func theCacheKeepsOneCopyAndEvictsTheOldestTimestamp() async throws {
        try await Self.withNodes(1, capacity: 3) { network, urls, _ in
            _ = try await Self.call(.POST, urls[0] + "/relay/v1/subscriptions", "[\"\(Self.topic)\"]")
            for timestamp in [5, 1, 4, 4, 2, 3] {
                _ = try await Self.call(.POST, urls[0] + "/relay/v1/messages/" + Self.encoded, #"{"payload":"AQID","contentTopic":"/t","timestamp":\#(timestamp)}"#)
            }
            let body = try await Self.call(.GET, urls[0] + "/relay/v1/messages/" + Self.encoded).body
            let timestamps = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]]).compactMap { $0["timestamp"] as? Int }
            #expect(timestamps == [5, 4, 3], "the repeat of 4 is kept once; 1 and 2 were evicted")
            #expect(network.published.count == 6)
        }
    }

    /// A publisher that sends a message again (say, a retry whose first answer was lost) does not reach the
    /// subscribers twice while the network remembers the message, even after they polled the first copy.
    @Test func aRepeatedMessageIsRelayedOncePerSeenWindow() async throws {
        try await Self.withNodes(2, seenWindow: .seconds(2)) { _, urls, _ in
            for url in urls { _ = try await Self.call(.POST, url + "/relay/v1/subscriptions", "[\"\(Self.topic)\"]") }
            let message = #"{"payload":"AQID","contentTopic":"/t","timestamp":7}"#
            let start = ContinuousClock.now
            _ = try await Self.call(.POST, urls[0] + "/relay/v1/messages/" + Self.encoded, message)
            // The window began while the first POST was handled: after `start`, before `relayed`.
            let relayed = ContinuousClock.now
            #expect(try await Self.call(.GET, urls[1] + "/relay/v1/messages/" + Self.encoded).body.contains("\"timestamp\":7"))
            let repeated = try await Self.call(.POST, urls[0] + "/relay/v1/messages/" + Self.encoded, message)
            // On a machine too loaded to repeat within the window, only the other message's relay is checked.
            let repeatedWithinWindow = ContinuousClock.now - start < .seconds(2)
            let other = #"{"payload":"AQID","contentTopic":"/t","timestamp":8}"#
            _ = try await Self.call(.POST, urls[0] + "/relay/v1/messages/" + Self.encoded, other)
            let polled = try await Self.call(.GET, urls[1] + "/relay/v1/messages/" + Self.encoded).body
            #expect(polled.contains("\"timestamp\":8"), "another message (another hash) is relayed")
            guard repeatedWithinWindow else { return }
            #expect(repeated.status == 200)
            #expect(!polled.contains("\"timestamp\":7"), "the repeat is dropped")
            // Once the window has passed, the same message is new again.
            try await Task.sleep(until: relayed + .seconds(2.2))
            _ = try await Self.call(.POST, urls[0] + "/relay/v1/messages/" + Self.encoded, message)
            #expect(try await Self.call(.GET, urls[1] + "/relay/v1/messages/" + Self.encoded).body.contains("\"timestamp\":7"))
        }
    }

    @Test func theClientRoundTripsMessagesExactlyAndNamesEachFailure() async throws {
        try await Self.withNodes(2, initializingFor: .seconds(3_600)) { _, urls, nodes in
            let gateway = WakuRESTClient(baseURL: urls[0], timeout: .seconds(5))
            let other = WakuRESTClient(baseURL: urls[1] + "/", timeout: .seconds(5))
            await #expect(throws: WakuRelayError.initializing) { try await gateway.subscribe(pubsubTopic: Self.topic) }
            for node in nodes { node.finishInitializing() }
            await #expect(throws: WakuRelayError.notSubscribed) { _ = try await gateway.poll(pubsubTopic: Self.topic) }
            try await gateway.subscribe(pubsubTopic: Self.topic)
            try await other.subscribe(pubsubTopic: Self.topic)
            let message = WakuMessage(
                payload: (0..<500).map { UInt8($0 % 256) }, contentTopic: "/waku/1/0xdba691a3/rfc26", version: 1, timestamp: 1_764_000_000_123_456_789,
                meta: [], ephemeral: false
            )
            try await other.publish(message, pubsubTopic: Self.topic)
            #expect(try await gateway.poll(pubsubTopic: Self.topic) == [message], "nanosecond timestamps survive exactly")
            #expect(try await gateway.poll(pubsubTopic: Self.topic).isEmpty)
            await #expect(throws: WakuRelayError.self) { try await gateway.subscribe(pubsubTopic: "/not/a/shard") }
            let nowhere = WakuRESTClient(baseURL: "http://127.0.0.1:1", timeout: .seconds(2))
            await #expect {
                try await nowhere.poll(pubsubTopic: Self.topic)
            } throws: { error in
                if case .unreachable = error as? WakuRelayError { return true }
                return false
            }
        }
    }

    /// The store keeps every message once (not ephemeral ones) whatever the caches dropped, and serves
    /// them in nwaku's shape: filtered by content topics and time, oldest first, 100 at most a page, the
    /// next page from `paginationCursor`; the client reads it back exactly, and names a node without a
    /// store peer (412).
    @Test func theStoreServesWhatTheCacheDroppedPageByPage() async throws {
        try await Self.withNodes(1, capacity: 2) { network, urls, nodes in
            let client = WakuRESTClient(baseURL: urls[0], timeout: .seconds(5))
            try await client.subscribe(pubsubTopic: Self.topic)
            let (wanted, other) = ("/waku/1/0x01020304/rfc26", "/waku/1/0x0a0b0c0d/rfc26")
            for index in 0..<150 {
                try await client.publish(
                    WakuMessage(payload: [UInt8(index % 256), 1], contentTopic: index % 3 == 2 ? other : wanted, timestamp: 1_000 + Int64(index)), pubsubTopic: Self.topic
                )
            }
            try await client.publish(WakuMessage(payload: [9], contentTopic: wanted, timestamp: 2_000, ephemeral: true), pubsubTopic: Self.topic)
            #expect(nodes[0].evictedCount == 149, "the cache of 2 kept the last two")

            let raw = try await Self.call(.GET, urls[0] + "/store/v3/messages?pubsubTopic=" + Self.encoded + "&contentTopics=%2Fwaku%2F1%2F0x01020304%2Frfc26&includeData=true")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(raw.body.utf8)) as? [String: Any])
            #expect(raw.status == 200 && page["statusCode"] as? Int == 200 && page["requestId"] is String)
            let entries = try #require(page["messages"] as? [[String: Any]])
            #expect(entries.count == 20, "nwaku's default page")
            #expect((entries.first?["messageHash"] as? String)?.hasPrefix("0x") == true && entries.first?["pubsubTopic"] as? String == Self.topic)
            #expect((entries.first?["message"] as? [String: Any])?["timestamp"] as? Int == 1_000)
            #expect(page["paginationCursor"] is String)

            var query = WakuStoreQuery(pubsubTopic: Self.topic, contentTopics: [wanted], startTime: 1_010, endTime: 1_149)
            var timestamps: [Int64] = []
            var pages = 0
            while true {
                let answer = try await client.queryStore(query)
                pages += 1
                timestamps += answer.messages.map(\.timestamp)
                #expect(answer.messages.allSatisfy { $0.contentTopic == wanted && $0.payload.count == 2 })
                guard let cursor = answer.cursor else { break }
                query.cursor = cursor
            }
            let expected = (10..<150).filter { $0 % 3 != 2 }.map { 1_000 + Int64($0) }
            #expect(timestamps == expected, "every stored message in range, oldest first, none twice, the ephemeral one not kept")
            #expect(pages == 1, "\(expected.count) messages fit one page of 100")
            query = WakuStoreQuery(pubsubTopic: Self.topic, contentTopics: [wanted, other], startTime: 1, endTime: 3_000)
            var all = 0
            pages = 0
            while true {
                let answer = try await client.queryStore(query)
                pages += 1
                all += answer.messages.count
                guard let cursor = answer.cursor else { break }
                query.cursor = cursor
            }
            #expect(all == 150 && pages == 2)
            let tooMany = (0..<11).map { String(format: "/waku/1/0x%08x/rfc26", $0) }
            await #expect(throws: WakuRelayError.self) {
                _ = try await client.queryStore(WakuStoreQuery(pubsubTopic: Self.topic, contentTopics: tooMany, startTime: 1, endTime: 2))
            }
            #expect(network.published.count == 151)
        }
        try await Self.withNodes(1, hasStorePeer: false) { _, urls, _ in
            let raw = try await Self.call(.GET, urls[0] + "/store/v3/messages?contentTopics=x")
            #expect(raw.status == 412 && raw.body == "No suitable service peer & no discovery method")
            let client = WakuRESTClient(baseURL: urls[0], timeout: .seconds(5))
            await #expect(throws: WakuRelayError.noStorePeer("No suitable service peer & no discovery method")) {
                _ = try await client.queryStore(WakuStoreQuery(pubsubTopic: Self.topic, contentTopics: ["/t"], startTime: 1, endTime: 2))
            }
        }
    }

    /// A poll whose answer comes after the configured request timeout still delivers its messages. The node
    /// takes them from its cache before it answers, so a client that stopped waiting would lose them.
    @Test func aPollAnsweredAfterTheRequestTimeoutKeepsItsMessages() async throws {
        try await Self.withNodes(2, pollAnswerDelay: .seconds(2)) { _, urls, _ in
            let gateway = WakuRESTClient(baseURL: urls[0], timeout: .seconds(1))
            let other = WakuRESTClient(baseURL: urls[1], timeout: .seconds(5))
            try await gateway.subscribe(pubsubTopic: Self.topic)
            try await other.subscribe(pubsubTopic: Self.topic)
            let message = WakuMessage(
                payload: [1, 2, 3], contentTopic: "/waku/1/0x01020304/rfc26", version: 0, timestamp: 1_764_000_000_000_000_001, meta: [], ephemeral: false
            )
            try await other.publish(message, pubsubTopic: Self.topic)
            #expect(try await gateway.poll(pubsubTopic: Self.topic) == [message])
        }
    }

    /// A poll to a node that does not answer ends soon after its task is cancelled (at shutdown, say), not
    /// at its 60-second deadline: the connection pool waits only its grace of 5 s for the answer.
    @Test func aCancelledPollToANodeThatDoesNotAnswerEndsWithinTheGrace() async throws {
        try await Self.withNodes(1, pollAnswerDelay: .seconds(600)) { _, urls, _ in
            let gateway = WakuRESTClient(baseURL: urls[0], timeout: .seconds(5))
            try await gateway.subscribe(pubsubTopic: Self.topic)
            let poll = Task { try await gateway.poll(pubsubTopic: Self.topic) }
            try await Task.sleep(for: .milliseconds(500))
            let cancelled = ContinuousClock.now
            poll.cancel()
            await #expect(throws: WakuRelayError.self) { try await poll.value }
            // The grace is 5 s; the bound leaves room for a loaded machine and is far below the 60 s deadline.
            #expect(ContinuousClock.now - cancelled < .seconds(40))
        }
    }
}
