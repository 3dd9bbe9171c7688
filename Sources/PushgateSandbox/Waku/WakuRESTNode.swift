import Foundation
public import Hummingbird
import NIOCore
import Synchronization

/// One emulated nwaku node's REST API: `POST`/`DELETE /relay/v1/subscriptions`,
/// `GET`/`POST /relay/v1/messages/{percent-encoded pubsub topic}`, `GET /store/v3/messages` (the
/// network's store, or 412 without a store peer), `GET /health` and `GET /debug/v1/version`, with nwaku's
/// answers, its one cache for all topics (the oldest timestamp evicted when full, an identical message
/// kept once) and its refusals.
public final class WakuRESTNode: Sendable {
    /// The node's name, for logs.
    public let name: String
    let network: WakuNetworkEmulator
    /// How many messages the cache holds.
    public let cacheCapacity: Int
    /// Whether store queries reach a store peer.
    let hasStorePeer: Bool
    private let initializingFor: Duration
    /// How long a poll's answer takes once the messages left the cache.
    private let pollAnswerDelay: Duration
    private struct State {
        var subscriptions: Set<String> = []
        var cache: [WakuEmulatedMessage] = []
        var hashes: Set<[UInt8]> = []
        var evicted = 0
        var storeQueries = 0
    }
    private let state = Mutex(State())
    private let started = ContinuousClock.now
    private let readyEarly = Atomic<Bool>(false)

    init(name: String, network: WakuNetworkEmulator, initializingFor: Duration, pollAnswerDelay: Duration, cacheCapacity: Int, hasStorePeer: Bool) {
        self.name = name
        self.network = network
        self.cacheCapacity = max(1, cacheCapacity)
        self.hasStorePeer = hasStorePeer
        self.initializingFor = initializingFor
        self.pollAnswerDelay = pollAnswerDelay
    }

    /// How many messages the cache dropped unread.
    public var evictedCount: Int { self.state.withLock { $0.evicted } }
    /// How many messages wait in the cache.
    public var cachedCount: Int { self.state.withLock { $0.cache.count } }
    /// How many store queries the node answered from the store.
    public var storeQueryCount: Int { self.state.withLock { $0.storeQueries } }

    func countStoreQuery() {
        self.state.withLock { $0.storeQueries += 1 }
    }

    /// The node's HTTP server.
    public func makeApplication(host: String, port: Int) -> some ApplicationProtocol {
        Application(
            responder: WakuRESTResponder(node: self), configuration: .init(address: .hostname(host, port: port), serverName: "nwaku-emulator"),
            logger: self.network.logger
        )
    }

    /// Caches `messages` at once: no poll reads the cache between two of them.
    func receive(_ messages: [WakuEmulatedMessage]) {
        self.state.withLock { state in
            for message in messages {
                guard state.subscriptions.contains(message.pubsubTopic) else { continue }
                let hash = message.hash
                guard !state.hashes.contains(hash) else { continue }
                if state.cache.count >= self.cacheCapacity,
                    let oldest = state.cache.indices.min(by: { state.cache[$0].timestamp < state.cache[$1].timestamp })
                {
                    state.hashes.remove(state.cache[oldest].hash)
                    state.cache.remove(at: oldest)
                    state.evicted += 1
                }
                state.cache.append(message)
                state.hashes.insert(hash)
            }
        }
    }

    /// Whether relay paths are still answered as while initialising (for `initializingFor` after the node
    /// was made).
    private func isInitializing() -> Bool {
        !self.readyEarly.load(ordering: .relaxed) && ContinuousClock.now - self.started < self.initializingFor
    }

    /// Ends the initialising period now.
    public func finishInitializing() {
        self.readyEarly.store(true, ordering: .relaxed)
    }

    struct Reply {
        let status: HTTPResponse.Status
        let body: String
        let json: Bool
        /// How long to wait before sending it.
        var delay: Duration = .zero
        static func text(_ status: HTTPResponse.Status, _ body: String) -> Reply { Reply(status: status, body: body, json: false) }
    }

    static let initializing = "/relay endpoints are not available while initializing."
    static let badRequest = "Bad request initiated. Invalid path or method used."

    func handle(method: HTTPRequest.Method, path: String, query: String? = nil, contentType: String?, body: [UInt8]) -> Reply {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if method == .get && path == "/health" {
            let ready = !self.isInitializing()
            return Reply(
                status: .ok, body: "{\"nodeHealth\":\"\(ready ? "READY" : "INITIALIZING")\",\"protocolsHealth\":[{\"Relay\":\"\(ready ? "READY" : "NOT_READY")\"}]}",
                json: true
            )
        }
        if method == .get && path == "/debug/v1/version" { return .text(.ok, "v0.36.0-pushgate-emulator") }
        if method == .get && path == "/store/v3/messages" { return self.storeQuery(query) }
        guard segments.first == "relay" else { return .text(.badRequest, Self.badRequest) }
        if self.isInitializing() { return .text(.notFound, Self.initializing) }
        if segments == ["relay", "v1", "subscriptions"], method == .post || method == .delete {
            guard Self.acceptsContentType(contentType) else { return .text(.badRequest, "Wrong Content-Type, expected application/json or text/plain") }
            guard let topics = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String] else {
                return .text(.badRequest, "Failed to decode request body")
            }
            let invalid = topics.filter { !Self.isStaticShardTopic($0) }
            guard invalid.isEmpty else { return .text(.badRequest, "Invalid pubsub topic(s): \(invalid)") }
            self.state.withLock { state in
                if method == .post { state.subscriptions.formUnion(topics) } else { state.subscriptions.subtract(topics) }
            }
            return .text(.ok, "OK")
        }
        // The topic must be one percent-encoded segment; raw slashes make a path no route matches.
        guard segments.count == 4, segments[0...2] == ["relay", "v1", "messages"], let topic = Self.decodeSegment(segments[3]) else {
            return .text(.notFound, Self.initializing)
        }
        switch method {
        case .get:
            return self.poll(topic)
        case .post:
            guard Self.acceptsContentType(contentType) else { return .text(.badRequest, "Wrong Content-Type, expected application/json or text/plain") }
            return self.publish(topic, body: body)
        default:
            return .text(.badRequest, Self.badRequest)
        }
    }

    private func poll(_ topic: String) -> Reply {
        let taken: [WakuEmulatedMessage]? = self.state.withLock { state in
            guard state.subscriptions.contains(topic) else { return nil }
            let (mine, others) = (state.cache.filter { $0.pubsubTopic == topic }, state.cache.filter { $0.pubsubTopic != topic })
            state.cache = others
            for message in mine { state.hashes.remove(message.hash) }
            return mine
        }
        guard let taken else { return .text(.notFound, "") }
        // As nwaku does, the cache is emptied before the answer is sent: an answer the client no longer waits
        // for loses the messages.
        return Reply(status: .ok, body: "[" + taken.map(\.restJSON).joined(separator: ",") + "]", json: true, delay: self.pollAnswerDelay)
    }

    private func publish(_ topic: String, body: [UInt8]) -> Reply {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return .text(.badRequest, "Failed to decode request body")
        }
        guard let payloadText = object["payload"] as? String, !payloadText.isEmpty, let payload = Data(base64Encoded: payloadText), !payload.isEmpty else {
            return .text(.badRequest, "Failed to decode request body: payload must be non-empty standard base64")
        }
        guard let contentTopic = object["contentTopic"] as? String, !contentTopic.isEmpty else {
            return .text(.badRequest, "Failed to decode request body: contentTopic is required")
        }
        var meta: [UInt8] = []
        if let metaText = object["meta"] as? String, !metaText.isEmpty {
            guard let decoded = Data(base64Encoded: metaText) else { return .text(.badRequest, "Failed to decode request body: meta must be base64") }
            meta = Array(decoded)
        }
        var timestamp = Self.integer(object["timestamp"]) ?? 0
        if timestamp == 0 { timestamp = Int64(Date().timeIntervalSince1970 * 1e9) }
        guard self.state.withLock({ $0.subscriptions.contains(topic) }) else {
            return .text(.badRequest, "Failed to publish: Node not subscribed to topic: \(topic)")
        }
        let message = WakuEmulatedMessage(
            pubsubTopic: topic, payload: Array(payload), contentTopic: contentTopic, version: Self.integer(object["version"]).map { Int($0) } ?? 0,
            timestamp: timestamp, meta: meta, ephemeral: (object["ephemeral"] as? Bool) ?? false
        )
        let size = message.payload.count + message.contentTopic.utf8.count + message.meta.count + 64
        guard size <= self.network.maxMessageSize else {
            return .text(.badRequest, "Failed to publish: Message size exceeded maximum of \(self.network.maxMessageSize) bytes")
        }
        self.network.inject(message)
        return .text(.ok, "OK")
    }

    static func integer(_ value: Any?) -> Int64? {
        switch value {
        case let number as Int: Int64(number)
        case let number as Int64: number
        case let number as NSNumber: number.int64Value
        default: nil
        }
    }

    /// A percent-decoded path segment (`+` as a space, as nwaku's router decodes).
    static func decodeSegment(_ segment: String) -> String? {
        segment.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    static func isStaticShardTopic(_ topic: String) -> Bool {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].isEmpty, parts[1] == "waku", parts[2] == "2", parts[3] == "rs" else { return false }
        return [parts[4], parts[5]].allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    static func acceptsContentType(_ value: String?) -> Bool {
        guard let value = value?.lowercased() else { return false }
        return value.hasPrefix("application/json") || value.hasPrefix("text/plain")
    }
}

/// Routes raw requests to the node (nwaku's routing works on the raw, still encoded path).
struct WakuRESTResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let node: WakuRESTNode

    func respond(to request: Request, context: Context) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 20)
        let reply = self.node.handle(
            method: request.method, path: request.uri.path, query: request.uri.query, contentType: request.headers[.contentType], body: Array(body.readableBytesView)
        )
        if reply.delay > .zero { try await Task.sleep(for: reply.delay) }
        return Response(
            status: reply.status, headers: [.contentType: reply.json ? "application/json" : "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: reply.body))
        )
    }
}
