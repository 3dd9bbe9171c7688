import Foundation
import PushgateStatusWire
@testable import PushgateWaku
import Testing

/// How the Waku REST client reads a poll's and a store query's answer: nwaku's shape, and go-waku's
/// (URL-safe or unpadded base64, `version` and `timestamp` absent, `ephemeral` null), one unreadable entry
/// skipped without the others.
@Suite("Waku REST: reading messages")
struct WakuMessageJSONTests {
    static let payload: [UInt8] = (0..<300).map { UInt8(($0 * 7 + 3) % 256) }
    static let topic = "/waku/1/0xdba691a3/rfc26"

    static func standard(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    static func urlSafeUnpadded(_ bytes: [UInt8]) -> String {
        Self.standard(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test func pollAnswersInNwakusAndGoWakusShapes() throws {
        let meta: [UInt8] = [0xfb, 0xff, 0x01]
        let body = """
            [
              {"payload": "\(Self.standard(Self.payload))", "contentTopic": "\(Self.topic)", "version": 1,
               "timestamp": 1764000000123456789, "meta": "\(Self.standard(meta))", "ephemeral": false},
              {"payload": "\(Self.urlSafeUnpadded(Self.payload))", "contentTopic": "\(Self.topic)", "ephemeral": null,
               "rateLimitProof": {"proof": "x", "epoch": [1, 2]}, "meta": "\(Self.urlSafeUnpadded(meta))"},
              {"payload": 5, "contentTopic": "\(Self.topic)"},
              {"payload": "\(Self.standard(Self.payload))"},
              {"payload": "\(Self.standard(Self.payload))", "contentTopic": ""},
              {"payload": "not base64 at all!", "contentTopic": "\(Self.topic)"},
              "a string",
              {"payload": "", "contentTopic": "/t\\u00e9/1", "version": 0, "timestamp": -5, "ephemeral": true,
               "version": 2, "timestamp": 1.5}
            ]
            """
        let messages = try WakuMessageJSON.messages(from: Array(body.utf8))
        #expect(messages == [
            WakuMessage(payload: Self.payload, contentTopic: Self.topic, version: 1, timestamp: 1_764_000_000_123_456_789, meta: meta, ephemeral: false),
            WakuMessage(payload: Self.payload, contentTopic: Self.topic, version: 0, timestamp: 0, meta: meta, ephemeral: false),
            // Of duplicate keys the last counts; a timestamp that is not an integer counts as absent.
            WakuMessage(payload: [], contentTopic: "/té/1", version: 2, timestamp: 0, meta: [], ephemeral: true),
        ])
        // Foundation's reader, on the first entry, agrees (its timestamp exact too).
        let reference = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [Any])
        let first = try #require(reference.first as? [String: Any])
        #expect((first["timestamp"] as? NSNumber)?.int64Value == messages[0].timestamp)
        #expect(Data(base64Encoded: try #require(first["payload"] as? String)).map(Array.init) == messages[0].payload)
    }

    @Test func anAnswerThatIsNotAnArrayOfMessagesIsMalformed() {
        #expect(throws: WakuRelayError.malformedAnswer("not JSON")) { _ = try WakuMessageJSON.messages(from: Array("[{".utf8)) }
        #expect(throws: WakuRelayError.malformedAnswer("not JSON")) { _ = try WakuMessageJSON.messages(from: [0xff, 0xfe]) }
        #expect(throws: WakuRelayError.malformedAnswer("not a JSON array")) { _ = try WakuMessageJSON.messages(from: Array("{\"a\": 1}".utf8)) }
        #expect((try? WakuMessageJSON.messages(from: Array(" [ ] ".utf8))) == [])
        // go-waku answers an empty poll with `null` (Go's nil slice).
        #expect((try? WakuMessageJSON.messages(from: Array("null".utf8))) == [])
    }

    @Test func storePagesRefusalsAndMalformedAnswers() throws {
        let body = """
            {"requestId": "r1", "statusCode": 200, "statusDesc": "OK",
             "messages": [
               {"messageHash": "0xab", "message": {"payload": "\(Self.standard(Self.payload))", "contentTopic": "\(Self.topic)",
                "version": 1, "timestamp": 1764000000123456789}, "pubsubTopic": "/waku/2/rs/16/32"},
               {"messageHash": "0xcd"},
               {"messageHash": "0xef", "message": null}
             ],
             "paginationCursor": "0x1234"}
            """
        let page = try WakuStoreJSON.page(from: Array(body.utf8))
        #expect(page.messages == [WakuMessage(payload: Self.payload, contentTopic: Self.topic, version: 1, timestamp: 1_764_000_000_123_456_789)])
        #expect(page.cursor == "0x1234")
        let last = try WakuStoreJSON.page(from: Array(#"{"statusCode": 200, "messages": [], "paginationCursor": ""}"#.utf8))
        #expect(last.messages.isEmpty && last.cursor == nil)
        #expect(throws: WakuRelayError.refused(status: 503, reason: "no peers")) {
            _ = try WakuStoreJSON.page(from: Array(#"{"statusCode": 503, "statusDesc": "no peers", "messages": []}"#.utf8))
        }
        #expect(throws: WakuRelayError.malformedAnswer("no messages array")) { _ = try WakuStoreJSON.page(from: Array(#"{"requestId": "r2"}"#.utf8)) }
        #expect(throws: WakuRelayError.malformedAnswer("not a JSON object")) { _ = try WakuStoreJSON.page(from: Array("[]".utf8)) }
        #expect(throws: WakuRelayError.malformedAnswer("not JSON")) { _ = try WakuStoreJSON.page(from: Array("{".utf8)) }
    }

    /// go-waku writes a store answer with its protobuf's snake-case names and leaves an empty `messages`
    /// out.
    @Test func storePagesInGoWakusShape() throws {
        let body = """
            {"request_id": "r1", "status_code": 200, "status_desc": "OK",
             "messages": [{"message_hash": "q6s=", "message": {"payload": "\(Self.standard(Self.payload))",
               "content_topic": "\(Self.topic)", "version": 1, "timestamp": 1764000000123456789}, "pubsub_topic": "/waku/2/rs/16/32"}],
             "pagination_cursor": "q6s="}
            """
        let page = try WakuStoreJSON.page(from: Array(body.utf8))
        #expect(page.messages == [WakuMessage(payload: Self.payload, contentTopic: Self.topic, version: 1, timestamp: 1_764_000_000_123_456_789)])
        #expect(page.cursor == "q6s=")
        let empty = try WakuStoreJSON.page(from: Array(#"{"request_id": "r2", "status_code": 200, "status_desc": "OK"}"#.utf8))
        #expect(empty.messages.isEmpty && empty.cursor == nil)
        #expect(throws: WakuRelayError.refused(status: 503, reason: "no peers")) {
            _ = try WakuStoreJSON.page(from: Array(#"{"status_code": 503, "status_desc": "no peers"}"#.utf8))
        }
    }

    /// A poll of a topic the node is not subscribed to, as nwaku (an empty 404) and go-waku (a 404 that
    /// says so) answer it: the poller subscribes again. Other 404s are refusals.
    @Test func notSubscribedAnswersOfBothNodes() {
        #expect(WakuRESTClient.failure(status: 404, text: [], notSubscribedOn404: true) == .notSubscribed)
        #expect(WakuRESTClient.failure(status: 404, text: Array("not subscribed to topic".utf8), notSubscribedOn404: true) == .notSubscribed)
        #expect(WakuRESTClient.failure(status: 404, text: Array("no subscription found for pubsubTopic".utf8), notSubscribedOn404: true) == .notSubscribed)
        #expect(WakuRESTClient.failure(status: 404, text: Array("404 page not found".utf8), notSubscribedOn404: true) == .refused(status: 404, reason: "404 page not found"))
        #expect(WakuRESTClient.failure(status: 404, text: [], notSubscribedOn404: false) == .refused(status: 404, reason: ""))
    }
}
