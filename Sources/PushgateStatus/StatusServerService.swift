import Foundation
import Logging
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateStatusWire
import PushgateStore
import ServiceLifecycle

/// The Status server as one long-lived service: settles the identity (the configured key, else the one
/// in the store, else a new one saved there, so instances sharing a store agree), logs its public key,
/// then runs the poll loop (with the store backfill when the relay client also reaches the node's store)
/// until the gateway stops.
struct StatusServerService: Service {
    let settings: StatusSettings
    let configuredKey: Secp256k1.PrivateKey?
    let store: any PushStore
    let storeIsShared: Bool
    let relay: any WakuRelay
    let delivery: any StatusNotificationSink
    let metrics: StatusMetrics
    let logger: Logger
    /// Where the poll loop runs and sleeps (an event loop's executor), nil for Swift's shared pool; the
    /// messages it finds are handled on the shared pool either way.
    var pollExecutor: (any PollExecutor)? = nil

    func run() async throws {
        guard let identity = await self.identity() else { return }
        self.logger.notice(
            "status: push notification server ready",
            metadata: ["public_key": "\(identity.publicKeyHex)", "waku_rest_url": "\(Redaction.displayURL(self.settings.wakuRESTURL))", "pubsub_topic": "\(self.settings.pubsubTopic)"]
        )
        let topics = StatusListeningTopics(identity: identity)
        let processor = StatusMessageProcessor(
            pubsubTopic: self.settings.pubsubTopic, storeIsShared: self.storeIsShared, topics: topics, store: self.store, relay: self.relay, answer: StatusAnswer(identity: identity),
            registrations: StatusRegistrationHandler(
                identity: identity, store: self.store, topics: topics, logger: self.logger, serves: { [delivery] in delivery.serves($0) }
            ),
            queries: StatusQueryHandler(store: self.store, logger: self.logger),
            pushRequests: StatusPushRequestHandler(store: self.store, delivery: self.delivery, logger: self.logger), metrics: self.metrics,
            logger: self.logger
        )
        let poller = StatusWakuPoller(
            relay: self.relay, archive: self.relay as? any WakuStore, processor: processor, topics: topics, store: self.store, settings: self.settings, metrics: self.metrics,
            logger: self.logger, pollExecutor: self.pollExecutor
        )
        try await poller.run()
    }

    /// The identity, retrying the store until it answers or the gateway stops.
    private func identity() async -> StatusServerIdentity? {
        if let key = self.configuredKey { return StatusServerIdentity(privateKey: key) }
        var backoff: Duration = .milliseconds(200)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let secret: [UInt8]
                if let stored = try await self.store.statusIdentity() {
                    secret = stored
                } else {
                    secret = try await self.store.saveStatusIdentityIfAbsent(Secp256k1.PrivateKey().rawRepresentation)
                }
                return StatusServerIdentity(privateKey: try Secp256k1.PrivateKey(bytes: secret))
            } catch {
                self.logger.warning("status: cannot settle the server identity yet", metadata: ["error": "\(error)", "retry_in": "\(backoff)"])
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(10))
            }
        }
        return nil
    }
}
