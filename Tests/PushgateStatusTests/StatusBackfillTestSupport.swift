import Foundation
import Logging
import Prometheus
@testable import PushgateStatus
import PushgateStatusWire
import SwiftProtobuf
import Synchronization

/// A store that answers from a list of messages, oldest first, in pages with its own cursors (the index of
/// the next message), and records every query; or refuses every query with one error.
final class ScriptedStore: WakuStore {
    let messages: [WakuMessage]
    let refusal: WakuRelayError?
    let queries = Mutex<[WakuStoreQuery]>([])

    init(_ messages: [WakuMessage], refusal: WakuRelayError? = nil) {
        self.messages = messages.sorted { $0.timestamp < $1.timestamp }
        self.refusal = refusal
    }

    var queryCount: Int { self.queries.withLock { $0.count } }

    func queryStore(_ query: WakuStoreQuery) async throws(WakuRelayError) -> WakuStorePage {
        self.queries.withLock { $0.append(query) }
        if let refusal = self.refusal { throw refusal }
        let matching = self.messages.filter {
            Set(query.contentTopics).contains($0.contentTopic) && $0.timestamp >= query.startTime && $0.timestamp <= query.endTime
        }
        let start = query.cursor.flatMap { Int($0.dropFirst("at-".count)) } ?? 0
        let end = min(matching.count, start + query.pageSize)
        return WakuStorePage(messages: Array(matching[start..<end]), cursor: end < matching.count ? "at-\(end)" : nil)
    }
}

/// A relay that keeps what is published and polls empty (the backfill tests' answers).
final class PublishRecordingRelay: WakuRelay {
    let published = Mutex<[WakuMessage]>([])
    func subscribe(pubsubTopic: String) async throws(WakuRelayError) {}
    func poll(pubsubTopic: String) async throws(WakuRelayError) -> [WakuMessage] { [] }
    func publish(_ message: WakuMessage, pubsubTopic: String) async throws(WakuRelayError) {
        self.published.withLock { $0.append(message) }
    }
}

/// Metrics kept in a Prometheus registry, read back as text.
struct RecordedMetrics {
    let registry = PrometheusCollectorRegistry()
    var factory: PrometheusMetricsFactory { PrometheusMetricsFactory(registry: self.registry) }

    /// The value of a series (`name` or `name{labels}`), 0 when absent.
    func value(_ series: String) -> Int {
        let text = String(decoding: self.registry.emitToBuffer(), as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    }
}

/// A Status server's parts around one identity, for the backfill tests.
struct BackfillFixture {
    let identity: StatusServerIdentity
    let store: MemoryStatusStore
    let topics: StatusListeningTopics
    let metrics = RecordedMetrics()
    let statusMetrics: StatusMetrics
    let processor: StatusMessageProcessor

    /// - Parameters:
    ///   - identity: the server's identity; nil: a new one.
    ///   - store: the server's store; nil: a new, empty one (pass another fixture's to restart that server).
    init(relay: any WakuRelay, logger: Logger = .quiet, identity: StatusServerIdentity? = nil, store: MemoryStatusStore? = nil) throws {
        self.identity = try identity ?? StatusServerIdentity(privateKey: try Secp256k1.PrivateKey())
        self.store = store ?? MemoryStatusStore()
        self.topics = StatusListeningTopics(identity: self.identity)
        self.statusMetrics = StatusMetrics(factory: self.metrics.factory)
        self.processor = StatusMessageProcessor(
            pubsubTopic: "/waku/2/rs/16/32", storeIsShared: false, topics: self.topics, store: self.store, relay: relay,
            answer: StatusAnswer(identity: self.identity),
            registrations: StatusRegistrationHandler(identity: self.identity, store: self.store, topics: self.topics, logger: logger),
            queries: StatusQueryHandler(store: self.store, logger: logger),
            pushRequests: StatusPushRequestHandler(store: self.store, delivery: RecordingSink(), logger: logger), metrics: self.statusMetrics,
            logger: logger
        )
    }

    /// A registration as a status-go client sends it to this server, and the client.
    func registration(timestamp: Int64) throws -> (WakuMessage, TestClient) {
        let client = try TestClient(server: self.identity.publicKey)
        let amm = try StatusProbe.amm(payload: try client.sealed(client.registration()), type: 16, signer: client.identity)
        let payload = try ECIES.encrypt(WakuPayload.encode(data: amm, signer: client.identity), to: self.identity.publicKey)
        return (WakuMessage(payload: payload, contentTopic: self.identity.personalContentTopic, version: 1, timestamp: timestamp), client)
    }

    /// Whether `messages` hold a successful registration response to `client`.
    static func answered(_ client: TestClient, in messages: [WakuMessage]) -> Bool {
        let topic = StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: client.identity.publicKey))
        return messages.contains { message in
            guard message.contentTopic == topic, let inbound = try? StatusEnvelopeOpener.open(message.payload, key: .asymmetric(client.identity)),
                inbound.type == 17, let response = try? Protobuf_PushNotificationRegistrationResponse(serializedBytes: inbound.payload)
            else { return false }
            return response.success
        }
    }

    /// A message on `contentTopic` the server cannot open.
    static func junk(_ index: Int, contentTopic: String, timestamp: Int64) -> WakuMessage {
        WakuMessage(payload: (0..<200).map { _ in UInt8.random(in: 0...255) } + [UInt8(truncatingIfNeeded: index)], contentTopic: contentTopic, timestamp: timestamp)
    }
}
