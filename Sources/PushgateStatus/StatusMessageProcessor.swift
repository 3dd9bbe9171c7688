import CoreMetrics
import Foundation
import Logging
import PushgateCore
import PushgateStatusWire
import PushgateStore
import Synchronization
import SwiftProtobuf

/// Handles one polled (or store-recovered) Waku message from start to answer: skips the server's own
/// answers and repeats (by 14/WAKU2 message hash: in memory, then in the store so instances sharing it
/// take each message once, and — for registrations — so a restarted server catching up from the Waku
/// store does not take one again), drops what it cannot open, runs the handler of the AMM type and
/// publishes the answer.
final class StatusMessageProcessor: Sendable {
    let pubsubTopic: String
    /// Whether other instances share the store.
    let storeIsShared: Bool
    let topics: StatusListeningTopics
    let store: any StatusServerStore
    let seenMarker: StatusSeenMarker
    let relay: any WakuRelay
    let answer: StatusAnswer
    let registrations: StatusRegistrationHandler
    let queries: StatusQueryHandler
    let pushRequests: StatusPushRequestHandler
    let metrics: StatusMetrics
    let logger: Logger
    /// Hashes recently seen or published here, so the node's echo of an answer, gossip repeats and the
    /// store backfill's messages already polled cost no decryption. A backfill window reaches back up to
    /// a minute before the poll that asked for it, and may run a while later under load: 131,072 hashes
    /// are over two minutes of 1,000 messages a second, in about 3 MiB.
    private let recent = Mutex(RecentHashes(capacity: 131_072))
    /// Hashes of the answers published here: the node relays them back (nwaku's triggerSelf).
    private let published = Mutex(RecentHashes(capacity: 16_384))

    init(
        pubsubTopic: String, storeIsShared: Bool, topics: StatusListeningTopics, store: any StatusServerStore, relay: any WakuRelay, answer: StatusAnswer,
        registrations: StatusRegistrationHandler, queries: StatusQueryHandler, pushRequests: StatusPushRequestHandler, metrics: StatusMetrics,
        logger: Logger, seenMarkPauses: [Duration] = StatusSeenMarker.defaultPauses
    ) {
        self.pubsubTopic = pubsubTopic
        self.storeIsShared = storeIsShared
        self.topics = topics
        self.store = store
        self.seenMarker = StatusSeenMarker(store: store, pauses: seenMarkPauses)
        self.relay = relay
        self.answer = answer
        self.registrations = registrations
        self.queries = queries
        self.pushRequests = pushRequests
        self.metrics = metrics
        self.logger = logger
    }

    /// What became of a message (for tests and counters).
    enum Disposition: Equatable, Sendable {
        case own, notOurs, duplicate, ignored, answered(Int), unanswered(Int)
    }

    /// Where a message came from.
    enum Source: Sendable {
        /// A relay poll.
        case relay
        /// The node's store, catching up (``StatusStoreBackfill``).
        case store
    }

    @discardableResult
    func process(_ message: WakuMessage, source: Source = .relay) async -> Disposition {
        if source == .relay { self.metrics.polled.increment() }
        let hash = WakuMessageHash.compute(
            pubsubTopic: self.pubsubTopic, payload: message.payload, contentTopic: message.contentTopic, meta: message.meta,
            timestampNanoseconds: message.timestamp
        )
        if self.published.withLock({ $0.contains(hash) }) {
            self.metrics.own.increment()
            return .own
        }
        guard self.recent.withLock({ $0.insert(hash) }) else {
            self.metrics.duplicate.increment()
            return .duplicate
        }
        guard let key = self.topics.key(for: message.contentTopic) else {
            self.metrics.notOurs.increment()
            return .notOurs
        }
        let inbound: StatusInboundMessage
        do {
            inbound = try StatusEnvelopeOpener.open(message.payload, key: key)
        } catch {
            self.metrics.notOurs.increment()
            return .notOurs
        }
        // Instances sharing the store may all see the message (each polling its own node): the first to
        // record its hash takes it. Alone on its store, the in-memory set above is enough, but for
        // registrations: after a restart the store backfill brings back the last hour, and a registration
        // taken again would be answered with a version mismatch (push requests are kept once by their
        // message id; a query answered twice harms no one).
        if self.storeIsShared || inbound.type == 16 {
            do {
                guard try await self.seenMarker.mark(StatusSeenID.wakuHash(hash)) else {
                    self.metrics.duplicate.increment()
                    return .duplicate
                }
            } catch {
                self.logger.errorUnlessStopping("status: cannot record a message as seen; it is handled anyway", error: error)
            }
        }
        switch inbound.type {
        case 16:
            // Marked seen, a registration is not taken again: it is saved even when a graceful stop
            // cancels the caller (the store calls have their own deadlines).
            let registrations = self.registrations
            let (response, result) = await Task { await registrations.handle(inbound) }.value
            self.metrics.registration(result)
            return await self.publish(response, kind: .registrationResponse, to: inbound.sender, type: inbound.type)
        case 18:
            self.metrics.queried()
            guard let response = await self.queries.handle(inbound) else { return .unanswered(inbound.type) }
            return await self.publish(response, kind: .queryResponse, to: inbound.sender, type: inbound.type)
        case 20:
            self.metrics.pushRequested()
            guard let (response, _) = await self.pushRequests.handle(inbound) else { return .unanswered(inbound.type) }
            for report in response.reports {
                self.metrics.report(report.success ? "SUCCESS" : Self.reportCode(report.error))
            }
            return await self.publish(response, kind: .pushResponse, to: inbound.sender, type: inbound.type)
        default:
            return .ignored
        }
    }

    private func publish(_ response: some SwiftProtobuf.Message, kind: StatusAnswer.Kind, to recipient: Secp256k1.PublicKey, type: Int) async -> Disposition {
        let message: WakuMessage
        do {
            message = try self.answer.message(response, kind: kind, to: recipient, nowNanoseconds: Self.nowNanoseconds())
        } catch {
            self.logger.error("status: cannot build an answer", metadata: ["error": "\(error)"])
            return .unanswered(type)
        }
        let hash = WakuMessageHash.compute(
            pubsubTopic: self.pubsubTopic, payload: message.payload, contentTopic: message.contentTopic, meta: message.meta,
            timestampNanoseconds: message.timestamp
        )
        _ = self.published.withLock { $0.insert(hash) }
        var delay: Duration = .milliseconds(100)
        for attempt in 1...3 {
            do {
                try await self.relay.publish(message, pubsubTopic: self.pubsubTopic)
                self.metrics.answersPublished.increment()
                return .answered(type)
            } catch {
                self.metrics.wakuError("publish")
                self.logger.warning("status: publishing an answer failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                if attempt < 3 {
                    try? await Task.sleep(for: delay)
                    delay *= 4
                }
            }
        }
        return .unanswered(type)
    }

    /// A report's error as status-go's enum names it.
    static func reportCode(_ error: Protobuf_PushNotificationReport.ErrorType) -> String {
        switch error {
        case .wrongToken: "WRONG_TOKEN"
        case .internalError: "INTERNAL_ERROR"
        case .notRegistered: "NOT_REGISTERED"
        default: "UNKNOWN_ERROR_TYPE"
        }
    }

    static func nowNanoseconds() -> Int64 {
        let now = Date().timeIntervalSince1970
        let seconds = now.rounded(.down)
        return Int64(seconds) * 1_000_000_000 + Int64(((now - seconds) * 1e9).rounded())
    }
}
