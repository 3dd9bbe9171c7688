import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateProviderSupport
public import PushgateStatusWire

/// A ``WakuRelay`` and ``WakuStore`` over a Waku node's REST API (nwaku's, which go-waku's matches in
/// paths): relay subscriptions, `GET`/`POST /relay/v1/messages/{pubsub topic}` with the topic
/// percent-encoded as one path segment, and `GET /store/v3/messages`. Every request has the deadline given
/// at creation, except a relay poll, which waits at least 60 s (see ``poll(pubsubTopic:)``), and a store
/// query, which waits at least 10 s (see ``queryStore(_:)``).
///
/// Requests go over the gateway's own keep-alive HTTP/1.1 connections (``HTTP1ConnectionPool``): the
/// poll loop asks the node several times a second even when idle, and a general-purpose client's
/// per-request work was half of the idle gateway's CPU.
public struct WakuRESTClient: WakuRelay, WakuStore {
    private let baseURL: String
    private let pool: HTTP1ConnectionPool
    private let timeout: Duration
    /// The largest answer read (a full cache of large messages).
    static let maximumAnswer = 64 << 20
    /// The shortest deadline of a relay poll by default, whatever the configured timeout.
    public static let minimumPollTimeout: Duration = .seconds(60)
    private let pollTimeout: Duration
    /// The shortest deadline of a store query, whatever the configured timeout: nwaku itself gives its
    /// store peer 5 s before it answers.
    public static let minimumStoreTimeout: Duration = .seconds(10)
    private let storeTimeout: Duration

    /// A client of the node at `baseURL` (`http://127.0.0.1:8645`; `https` is verified against the
    /// system's trust store).
    /// - Parameters:
    ///   - timeout: the deadline of every request but a relay poll.
    ///   - minimumPollTimeout: the shortest deadline of a relay poll (see ``poll(pubsubTopic:)``); a
    ///     one-shot diagnostic that must end within its own time passes `timeout`.
    public init(baseURL: String, timeout: Duration, minimumPollTimeout: Duration = Self.minimumPollTimeout) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
        self.pollTimeout = max(timeout, minimumPollTimeout)
        self.storeTimeout = max(timeout, Self.minimumStoreTimeout)
        let connectTimeout = TimeAmount.nanoseconds(max(1, timeout.nanosecondsClamped))
        self.pool = HTTP1ConnectionPool(
            proxy: nil, connectTimeout: connectTimeout, idleTimeout: .seconds(30), maximumIdlePerOrigin: 64, bodyLimit: Self.maximumAnswer
        )
    }

    public func subscribe(pubsubTopic: String) async throws(WakuRelayError) {
        let body = try Self.jsonArray([pubsubTopic])
        let (status, text) = try await self.send(.POST, "/relay/v1/subscriptions", body: body)
        guard status == 200 else { throw Self.failure(status: status, text: text) }
    }

    /// Takes the messages the node cached for `pubsubTopic`, waiting for the answer at least 60 s by
    /// default (or the configured timeout when that is longer).
    public func poll(pubsubTopic: String) async throws(WakuRelayError) -> [WakuMessage] {
        // The read is destructive: the node empties its cache for the topic as it answers, so an answer we
        // stop waiting for is lost for good, however soon after the deadline it would have come. The
        // configured timeout would turn a slow node (or a busy gateway) into lost messages; this deadline
        // only has to notice a node that never answers. A long one holds up nothing else: the poll loop
        // makes one poll at a time, and would wait for a dead node's answer anyway. At shutdown (the task
        // cancelled) the pool still waits up to its cancellation grace (5 s) for an answer under way.
        let (status, text) = try await self.send(
            .GET, "/relay/v1/messages/" + Self.pathSegment(pubsubTopic), body: nil, timeout: self.pollTimeout
        )
        guard status == 200 else { throw Self.failure(status: status, text: text, notSubscribedOn404: true) }
        return try WakuMessageJSON.messages(from: text)
    }

    public func publish(_ message: WakuMessage, pubsubTopic: String) async throws(WakuRelayError) {
        let body = WakuMessageJSON.publishBody(message)
        let (status, text) = try await self.send(.POST, "/relay/v1/messages/" + Self.pathSegment(pubsubTopic), body: body)
        guard status == 200 else { throw Self.failure(status: status, text: text) }
    }

    /// Asks the node's store peer for one page (`includeData=true`, oldest first), waiting at least 10 s.
    /// nwaku's 412 (no store peer and no way to discover one) is ``WakuRelayError/noStorePeer(_:)``.
    public func queryStore(_ query: WakuStoreQuery) async throws(WakuRelayError) -> WakuStorePage {
        let (status, text) = try await self.send(.GET, Self.storePath(query), body: nil, timeout: self.storeTimeout)
        guard status == 200 else {
            if status == 412 { throw .noStorePeer(String(decoding: text.prefix(300), as: UTF8.self)) }
            throw Self.failure(status: status, text: text)
        }
        return try WakuStoreJSON.page(from: text)
    }

    /// `/store/v3/messages?…` for a query: every value percent-encoded, the content topics joined by
    /// commas (nwaku splits the decoded list on them).
    static func storePath(_ query: WakuStoreQuery) -> String {
        var items = [
            "pubsubTopic=" + Self.pathSegment(query.pubsubTopic),
            "contentTopics=" + query.contentTopics.map(Self.pathSegment).joined(separator: ","),
            "startTime=\(query.startTime)", "endTime=\(query.endTime)", "includeData=true", "ascending=true",
            "pageSize=\(min(max(1, query.pageSize), WakuStoreQuery.maximumPageSize))",
        ]
        if let cursor = query.cursor { items.append("cursor=" + Self.pathSegment(cursor)) }
        return "/store/v3/messages?" + items.joined(separator: "&")
    }

    /// The pubsub topic as one path segment: everything but RFC 3986's unreserved characters
    /// percent-encoded (so `/` becomes `%2F`).
    static func pathSegment(_ topic: String) -> String {
        var result = ""
        for byte in topic.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(digits[Int(byte >> 4)])
                result.unicodeScalars.append(digits[Int(byte & 0x0f)])
            }
        }
        return result
    }

    private static func jsonArray(_ strings: [String]) throws(WakuRelayError) -> [UInt8] {
        do {
            return Array(try JSONSerialization.data(withJSONObject: strings, options: [.withoutEscapingSlashes]))
        } catch {
            throw .malformedAnswer("cannot encode the topic list")
        }
    }

    static func failure(status: Int, text: [UInt8], notSubscribedOn404: Bool = false) -> WakuRelayError {
        let reason = String(decoding: text.prefix(300), as: UTF8.self)
        if status == 404 {
            if reason.contains("initializing") { return .initializing }
            // nwaku answers an empty 404; go-waku names it ("not subscribed to topic", "no subscription found").
            if notSubscribedOn404 && (reason.isEmpty || reason.contains("not subscribed") || reason.contains("no subscription")) { return .notSubscribed }
        }
        if status == 400 && reason.contains("not subscribed") { return .notSubscribed }
        return .refused(status: status, reason: reason)
    }

    /// Sends one request and reads its answer, all within `timeout` (the configured timeout when nil).
    private func send(_ method: HTTPMethod, _ path: String, body: [UInt8]?, timeout: Duration? = nil) async throws(WakuRelayError) -> (Int, [UInt8]) {
        guard let url = URL(string: self.baseURL + path) else { throw .unreachable("not a URL: \(Redaction.displayURL(self.baseURL))") }
        var headers = HTTPHeaders([("Accept", "application/json")])
        if body != nil { headers.add(name: "Content-Type", value: "application/json") }
        do {
            let answer = try await self.pool.request(
                method, url, headers: headers, body: ByteBuffer(bytes: body ?? []),
                deadline: .now() + .nanoseconds((timeout ?? self.timeout).nanosecondsClamped)
            )
            return (answer.status, answer.body)
        } catch {
            throw .unreachable(Self.describe(error))
        }
    }

    private static func describe(_ error: any Error) -> String {
        if case HTTP1ExchangeError.deadlineExceeded = error { return "no answer within the deadline" }
        return String(describing: type(of: error)) + ": " + String(String(describing: error).prefix(200))
    }
}
