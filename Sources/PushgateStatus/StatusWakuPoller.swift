import CoreMetrics
import Foundation
import Logging
import PushgateConfig
import PushgateStatusWire
import PushgateStore
import ServiceLifecycle
import Synchronization

/// The Status server's loop: subscribes the Waku node to the pubsub topic (retrying with backoff while
/// the node initialises), then polls it continuously — at once again after a poll that returned
/// messages, after a pause that doubles from 5 ms with each empty poll up to `poll_interval_ms` — and hands each message to a handler task, up to 256 at
/// a time, without waiting for a poll's messages to be handled before the next poll (a node's cache is
/// small and drops what is not read in time). A poll
/// that comes back with as many messages as nwaku's default cache holds is logged: messages were likely
/// evicted before they were read. Every REST call has the client's deadline. Also prunes old seen ids and
/// picks up query topics registered through other instances.
struct StatusWakuPoller: Service {
    let relay: any WakuRelay
    let processor: StatusMessageProcessor
    let topics: StatusListeningTopics
    let store: any StatusServerStore
    let settings: StatusSettings
    let metrics: StatusMetrics
    let logger: Logger
    /// A poll returning at least this many messages may have lost some (nwaku's default cache is 50).
    let fullPollWarning = 50
    /// Messages handled at once.
    let concurrency = 256

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.loop()
        }
    }

    private func loop() async {
        let inFlight = InFlightCount()
        await withDiscardingTaskGroup { group in
            await self.loop(group: &group, inFlight: inFlight)
        }
    }

    private func loop(group: inout DiscardingTaskGroup, inFlight: InFlightCount) async {
        guard await self.subscribe() else { return }
        await self.refreshQueryTopics()
        var backoff: Duration = .milliseconds(100)
        var lastMaintenance = ContinuousClock.now
        var lastFullWarning: ContinuousClock.Instant?
        // After a poll that found messages the next comes soon; each empty poll doubles the pause, up to
        // `poll_interval_ms`: little latency while traffic flows, little CPU while idle.
        var idlePause = min(Duration.milliseconds(5), self.settings.pollInterval)
        while !Task.isCancelled {
            if ContinuousClock.now - lastMaintenance > .seconds(30) {
                lastMaintenance = .now
                await self.refreshQueryTopics()
                await self.prune()
            }
            let messages: [WakuMessage]
            do throws(WakuRelayError) {
                messages = try await self.relay.poll(pubsubTopic: self.settings.pubsubTopic)
                backoff = .milliseconds(100)
            } catch {
                self.metrics.wakuError("poll")
                if error == .notSubscribed {
                    self.logger.warning("status: the Waku node forgot the subscription; subscribing again")
                    guard await self.subscribe() else { return }
                } else {
                    self.logger.warning("status: polling the Waku node failed", metadata: ["error": "\(error)", "retry_in": "\(backoff)"])
                    try? await Task.sleep(for: backoff)
                    backoff = min(backoff * 2, .seconds(5))
                }
                continue
            }
            if messages.count >= self.fullPollWarning {
                self.metrics.cacheFull.increment()
                if lastFullWarning.map({ ContinuousClock.now - $0 > .seconds(60) }) ?? true {
                    lastFullWarning = .now
                    self.logger.warning(
                        "status: a poll returned \(messages.count) messages, as many as the node's default cache holds: some may have been evicted unread (raise the node's --rest-relay-cache-capacity)"
                    )
                }
            }
            if messages.isEmpty {
                try? await Task.sleep(for: idlePause)
                idlePause = min(idlePause * 2, self.settings.pollInterval)
                continue
            }
            idlePause = min(Duration.milliseconds(5), self.settings.pollInterval)
            for message in messages {
                while inFlight.value.load(ordering: .relaxed) >= self.concurrency {
                    try? await Task.sleep(for: .milliseconds(1))
                }
                inFlight.value.add(1, ordering: .relaxed)
                group.addTask {
                    await self.processor.process(message)
                    inFlight.value.subtract(1, ordering: .relaxed)
                }
            }
        }
    }

    /// Subscribes, retrying with backoff until it works or the gateway stops. - Returns: false when stopped.
    private func subscribe() async -> Bool {
        var backoff: Duration = .milliseconds(200)
        while !Task.isCancelled {
            do {
                try await self.relay.subscribe(pubsubTopic: self.settings.pubsubTopic)
                self.logger.notice("status: subscribed to the Waku node", metadata: ["pubsub_topic": "\(self.settings.pubsubTopic)"])
                return true
            } catch {
                self.metrics.wakuError("subscribe")
                self.logger.warning("status: cannot subscribe on the Waku node yet", metadata: ["error": "\(error)", "retry_in": "\(backoff)"])
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(10))
            }
        }
        return false
    }

    private func refreshQueryTopics() async {
        do {
            for hash in try await self.store.statusRegisteredKeyHashes() { self.topics.addQueryTopic(keyHash: hash) }
        } catch {
            self.logger.warning("status: cannot read the registered keys", metadata: ["error": "\(error)"])
        }
    }

    private func prune() async {
        do {
            let cutoff = Date().addingTimeInterval(-TimeInterval(self.settings.seenRetention.components.seconds))
            _ = try await self.store.pruneStatusMessagesSeen(before: cutoff)
        } catch {
            self.logger.warning("status: cannot prune seen message ids", metadata: ["error": "\(error)"])
        }
    }
}

/// How many messages are being handled.
final class InFlightCount: Sendable {
    let value = Atomic<Int>(0)
}
