import CoreMetrics
import Logging
import PushgateStatusWire
import PushgateStore
import Synchronization

/// Catches up from the Waku node's store on what the poll loop missed: takes the windows the
/// ``StatusBackfillPlanner`` asks for (merging those that arrive while one is under way), asks the store
/// for the messages of the server's content topics in each (its personal and partitioned topics, the
/// query topic of every registered key, ten to a query as nwaku allows, a page of 100 at a time through
/// `paginationCursor`) and hands them to the same ``StatusMessageProcessor`` as polled messages, which
/// skips those it already took by message hash.
///
/// Bounded: one window at a time and at most one a second, at most ``maximumPages`` pages per group of topics, ``concurrency``
/// messages handled at once, every query with the client's deadline. A failed window is tried again after
/// a pause that doubles up to a minute; a node without a store peer (nwaku's 412) is logged once and
/// counted each time, and asked again only a minute later. No window reaches back further than `limit`.
final class StatusStoreBackfill: Sendable {
    typealias Window = StatusBackfillPlanner.Window

    let archive: any WakuStore
    let processor: StatusMessageProcessor
    let topics: StatusListeningTopics
    let pubsubTopic: String
    /// How far back a window may reach, in nanoseconds.
    let limit: Int64
    let metrics: StatusMetrics
    let logger: Logger
    /// The most pages asked for one group of content topics in one window.
    let maximumPages: Int
    /// Messages handled at once.
    let concurrency = 32
    /// The pause after a window, before the next (windows asked for meanwhile merge into one).
    let spacing: Duration = .seconds(1)
    /// The first pause after a failed window; it doubles up to ``longestPause``.
    let firstPause: Duration
    /// The pause after a refusal for want of a store peer, and the longest after other failures.
    let longestPause: Duration

    private let pending = Mutex<Window?>(nil)
    private let wakeUps: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation
    private let reportedNoStorePeer = Atomic<Bool>(false)

    init(
        archive: any WakuStore, processor: StatusMessageProcessor, topics: StatusListeningTopics, pubsubTopic: String, limit: Duration,
        metrics: StatusMetrics, logger: Logger, maximumPages: Int = 1_000, firstPause: Duration = .seconds(2), longestPause: Duration = .seconds(60)
    ) {
        self.archive = archive
        self.processor = processor
        self.topics = topics
        self.pubsubTopic = pubsubTopic
        self.limit = StatusBackfillPlanner.nanoseconds(limit)
        self.metrics = metrics
        self.logger = logger
        self.maximumPages = maximumPages
        self.firstPause = firstPause
        self.longestPause = longestPause
        let (wakeUps, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wakeUps = wakeUps
        self.wakeUp = wakeUp
    }

    /// Asks for `window` to be caught up (merged with any window still waiting).
    func request(_ window: Window, reason: StatusBackfillPlanner.Reason) {
        self.metrics.backfill(reason)
        self.pending.withLock { $0 = $0.map { $0.merged(with: window) } ?? window }
        self.wakeUp.yield()
    }

    /// Runs windows as they are asked for, until the task is cancelled or ``finish()`` is called.
    func run() async {
        var pause = self.firstPause
        for await _ in self.wakeUps {
            while let window = self.pending.withLock({ value in
                let taken = value
                value = nil
                return taken
            }) {
                let error = await self.catchUp(window)
                guard let error else {
                    pause = self.firstPause
                    // Under a steady overflow every poll asks again: one window a second is enough.
                    do { try await Task.sleep(for: self.spacing) } catch { return }
                    continue
                }
                // Tried again later, with whatever else was asked for meanwhile.
                self.pending.withLock { $0 = $0.map { $0.merged(with: window) } ?? window }
                let wait: Duration
                if case .noStorePeer = error {
                    wait = self.longestPause
                    if !self.reportedNoStorePeer.exchange(true, ordering: .relaxed) {
                        self.logger.warning(
                            "status: the Waku node has no store peer, so messages its cache dropped cannot be caught up (configure a store node, e.g. --storenode); not logged again",
                            metadata: ["error": "\(error)"]
                        )
                    }
                } else {
                    wait = pause
                    pause = min(pause * 2, self.longestPause)
                    self.logger.warning("status: asking the Waku node's store failed", metadata: ["error": "\(error)", "retry_in": "\(wait)"])
                }
                do { try await Task.sleep(for: wait) } catch { return }
            }
        }
    }

    /// Ends ``run()`` once the window under way, if any, is done.
    func finish() {
        self.wakeUp.finish()
    }

    /// Asks the store for `window` on every content topic of the server and handles what comes back.
    /// - Returns: nil when done, else the error that stopped it.
    func catchUp(_ window: Window) async -> WakuRelayError? {
        guard let window = window.clamped(notBefore: StatusMessageProcessor.nowNanoseconds() - self.limit) else { return nil }
        var recovered = 0
        defer {
            if recovered > 0 {
                self.logger.info("status: caught up from the Waku node's store", metadata: ["messages": "\(recovered)"])
            }
        }
        for group in self.topics.contentTopics.chunked(by: WakuStoreQuery.maximumContentTopics) {
            var query = WakuStoreQuery(pubsubTopic: self.pubsubTopic, contentTopics: Array(group), startTime: window.start, endTime: window.end)
            var cursors: Set<String> = []
            for _ in 0..<self.maximumPages {
                guard !Task.isCancelled else { return nil }
                self.metrics.backfillQueries.increment()
                let page: WakuStorePage
                do {
                    page = try await self.archive.queryStore(query)
                } catch {
                    self.metrics.storeError(error)
                    return error
                }
                recovered += await self.handle(page.messages)
                // A node that hands back a cursor it gave before would loop forever.
                guard let next = page.cursor, !page.messages.isEmpty, cursors.insert(next).inserted else { break }
                query.cursor = next
            }
        }
        return nil
    }

    /// Handles a page's messages, ``concurrency`` at a time. - Returns: how many were new and for the server.
    private func handle(_ messages: [WakuMessage]) async -> Int {
        await withTaskGroup(of: Bool.self) { group in
            var recovered = 0
            var running = 0
            for message in messages {
                if running >= self.concurrency, let done = await group.next() {
                    running -= 1
                    if done { recovered += 1 }
                }
                running += 1
                group.addTask {
                    switch await self.processor.process(message, source: .store) {
                    case .answered, .unanswered, .ignored: true
                    case .own, .notOurs, .duplicate: false
                    }
                }
            }
            for await done in group where done { recovered += 1 }
            self.metrics.recovered.increment(by: recovered)
            return recovered
        }
    }
}
