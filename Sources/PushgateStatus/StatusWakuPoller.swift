import CoreMetrics
import Foundation
import Logging
import PushgateConfig
import PushgateCore
import PushgateStatusWire
import PushgateStore
import ServiceLifecycle
import Synchronization

/// The Status server's loop: subscribes the Waku node to the pubsub topic (retrying with backoff while
/// the node initialises), then polls it continuously — at once again after a poll that returned
/// messages, after a pause that doubles from 5 ms with each empty poll up to `poll_interval_ms` — and hands
/// each message to a handler task, up to 256 at a time, without waiting for a poll's messages to be
/// handled before the next poll (a node's cache is small and drops what is not read in time). A poll that
/// comes back with as many messages as the node's cache holds (`waku_cache_capacity`) is logged: messages
/// were likely evicted before they were read. Those, and whatever was missed while the node could not be
/// polled or before start-up, are caught up from the node's store (``StatusStoreBackfill``, when the node
/// has a store API and `backfill_window_minutes` is not 0) while polling goes on. Every REST call has a
/// deadline. Also prunes old seen ids and picks up query topics registered through other instances.
struct StatusWakuPoller: Service {
    let relay: any WakuRelay
    /// The node's store API, to catch up on missed messages; nil: none.
    let archive: (any WakuStore)?
    let processor: StatusMessageProcessor
    let topics: StatusListeningTopics
    let store: any StatusServerStore
    let settings: StatusSettings
    let metrics: StatusMetrics
    let logger: Logger
    /// The executor the loop runs on, whose timer its pauses use; nil: where `run()` is called, and
    /// `Task.sleep`.
    var pollExecutor: (any PollExecutor)? = nil
    /// Messages handled at once.
    let concurrency = 256
    /// The store backfill's first pause after a failed window (it doubles up to ``backfillLongestPause``).
    var backfillFirstPause: Duration = .seconds(2)
    /// The store backfill's pause after a 412 (no store peer), and its longest after other failures.
    var backfillLongestPause: Duration = .seconds(60)
    /// How long subscribing may fail before it is a warning: a node started beside the gateway (the
    /// built-in sandbox's, a container's) may not listen yet when the gateway first asks, and a failure
    /// that ends within this is logged at `info`.
    var subscribeGrace: Duration = .seconds(5)

    func run() async throws {
        // On the poll executor when there is one (its timer serves the loop's pauses), else where called.
        await withTaskExecutorPreference(self.pollExecutor) {
            await cancelWhenGracefulShutdown {
                await self.loop()
            }
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
        var planner = StatusBackfillPlanner(
            limit: self.settings.backfillWindow, cacheCapacity: self.settings.wakuCacheCapacity, pollInterval: self.settings.pollInterval
        )
        let backfill = self.makeBackfill()
        defer { backfill?.finish() }
        if let backfill {
            group.addTask(executorPreference: globalConcurrentExecutor) { await backfill.run() }
            backfill.request(planner.startUp(now: StatusMessageProcessor.nowNanoseconds()), reason: .startUp)
        }
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
            let pollStart = StatusMessageProcessor.nowNanoseconds()
            do throws(WakuRelayError) {
                messages = try await self.relay.poll(pubsubTopic: self.settings.pubsubTopic)
                backoff = .milliseconds(100)
                self.metrics.figures.polled(ok: true)
            } catch {
                planner.pollFailed()
                self.metrics.wakuError("poll")
                if error == .notSubscribed {
                    self.logger.warning("status: the Waku node forgot the subscription; subscribing again")
                    guard await self.subscribe() else { return }
                } else {
                    self.logger.warning("status: polling the Waku node failed", metadata: ["error": "\(error)", "retry_in": "\(backoff)"])
                    try? await self.pollExecutor.sleep(for: backoff)
                    backoff = min(backoff * 2, .seconds(5))
                }
                continue
            }
            if let backfill, let missed = planner.polled(startedAt: pollStart, endedAt: StatusMessageProcessor.nowNanoseconds(), count: messages.count) {
                backfill.request(missed.0, reason: missed.1)
            }
            if messages.count >= self.settings.wakuCacheCapacity {
                self.metrics.cacheFull.increment()
                if lastFullWarning.map({ ContinuousClock.now - $0 > .seconds(60) }) ?? true {
                    lastFullWarning = .now
                    self.logger.warning(
                        "status: a poll returned \(messages.count) messages, as many as the node's cache holds (waku_cache_capacity): some may have been evicted unread; they are caught up from the store if the node has one (raise the node's --rest-relay-cache-capacity)"
                    )
                }
            }
            if messages.isEmpty {
                try? await self.pollExecutor.sleep(for: idlePause)
                idlePause = min(idlePause * 2, self.settings.pollInterval)
                continue
            }
            idlePause = min(Duration.milliseconds(5), self.settings.pollInterval)
            for message in messages {
                while inFlight.value.load(ordering: .relaxed) >= self.concurrency {
                    try? await self.pollExecutor.sleep(for: .milliseconds(1))
                }
                inFlight.value.add(1, ordering: .relaxed)
                // Handling a message (signatures, decryption, store calls) is not the poll loop's: it runs on
                // the shared pool, whatever executor the loop runs on.
                group.addTask(executorPreference: globalConcurrentExecutor) {
                    await self.processor.process(message)
                    inFlight.value.subtract(1, ordering: .relaxed)
                }
            }
        }
    }

    /// The store backfill, when the node has a store API and catching up is on.
    private func makeBackfill() -> StatusStoreBackfill? {
        guard let archive = self.archive, self.settings.backfillWindow > .zero else { return nil }
        return StatusStoreBackfill(
            archive: archive, processor: self.processor, topics: self.topics, pubsubTopic: self.settings.pubsubTopic, limit: self.settings.backfillWindow,
            metrics: self.metrics, logger: self.logger, firstPause: self.backfillFirstPause, longestPause: self.backfillLongestPause
        )
    }

    /// Subscribes, retrying with backoff until it works or the gateway stops. - Returns: false when stopped.
    private func subscribe() async -> Bool {
        var backoff: Duration = .milliseconds(200)
        let started = ContinuousClock.now
        while !Task.isCancelled {
            do {
                try await self.relay.subscribe(pubsubTopic: self.settings.pubsubTopic)
                self.logger.notice("status: subscribed to the Waku node", metadata: ["pubsub_topic": "\(self.settings.pubsubTopic)"])
                return true
            } catch {
                self.metrics.wakuError("subscribe")
                let level: Logger.Level = ContinuousClock.now - started < self.subscribeGrace ? .info : .warning
                self.logger.log(
                    level: level, "status: cannot subscribe on the Waku node yet", metadata: ["error": "\(error)", "retry_in": "\(backoff)"]
                )
                try? await self.pollExecutor.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(10))
            }
        }
        return false
    }

    private func refreshQueryTopics() async {
        do {
            let refresh = self.topics.beginRefresh()
            self.topics.finishRefresh(refresh, registered: try await self.store.statusRegisteredKeyHashes())
        } catch {
            self.logger.warningUnlessStopping("status: cannot read the registered keys", error: error)
        }
    }

    private func prune() async {
        do {
            let cutoff = Date().addingTimeInterval(-TimeInterval(self.settings.seenRetention.components.seconds))
            _ = try await self.store.pruneStatusMessagesSeen(before: cutoff)
        } catch {
            self.logger.warningUnlessStopping("status: cannot prune seen message ids", error: error)
        }
    }
}

/// How many messages are being handled.
final class InFlightCount: Sendable {
    let value = Atomic<Int>(0)
}
