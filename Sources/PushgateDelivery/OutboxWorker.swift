public import Foundation
public import Logging
public import PushgateCore
public import PushgateStore
public import ServiceLifecycle
import Synchronization

/// Delivers what the outbox holds: what this instance's enqueues hand over (see ``OutboxHandOff``) and due
/// entries it claims (leased, so several instances share the outbox
/// without sending anything twice), delivers them with bounded concurrency, and completes, reschedules
/// (exponential backoff with jitter, honouring Retry-After) or gives them up.
///
/// On graceful shutdown it stops claiming and finishes the deliveries in flight; entries it had leased
/// but not started go back to the outbox when their lease ends.
public struct OutboxWorker: Service, CustomStringConvertible {
    /// Tuning.
    public struct Configuration: Sendable {
        /// Tokens a round takes: whole entries holding at most this many tokens together, and always at
        /// least one entry. A round's deliveries all go out at once (at most this many plus one entry's
        /// tokens, ``Dispatcher/tokensPerOutboxEntry``), so a round is one wave and finishes well within
        /// its lease even when every delivery runs to its deadline.
        public var batchSize = 128
        /// How long a claim holds an entry.
        public var lease: Duration = .seconds(60)
        /// The pause between empty rounds (an enqueue in this process ends it early).
        public var pollInterval: Duration = .milliseconds(500)
        /// Rounds under way at once: while there is a backlog, a round claims and completes entries while
        /// another's deliveries are in flight.
        public var lanes = 2
        /// The lanes beyond the first give way while front ends enqueue (an enqueue came less than this
        /// long ago): during an inflow one lane delivers and the answers to the senders keep the rest of
        /// the machine; the other lanes join in to deliver the backlog once the inflow pauses this long.
        public var helperQuietPeriod: Duration = .milliseconds(100)
        /// The shortest time a lane waits for an app's part of a round before it detaches the part and
        /// moves on (``OutboxAppPace``): well above a healthy provider's round. Tests that count rounds
        /// in flight raise it, so that a starved machine's slow round is never detached.
        var shortestRoundPatience: Duration = OutboxAppPace.defaultFloor
        /// The pauses before the removal of a round's finished entries is written again when the store
        /// refused it (a database slow or away for a moment; longer than the second a timed-out store call
        /// keeps the store's circuit open): entries whose removal is never written are claimed again when
        /// their leases end, and delivered again.
        var recordRetryPauses: [Duration] = [.milliseconds(1500), .seconds(3)]
        /// How much of the earliest lease must be left after a pause for the write to be tried again (the
        /// write itself may take the store's whole deadline).
        var recordRetryMargin: Duration = .seconds(5)
        /// How long an entry of an app this instance does not configure waits before it is claimed again
        /// (a fixed pause, not the backoff of failed deliveries): while instances on one database run
        /// different configurations (a rolling reload, a canary), one that has the app soon takes it.
        public var unknownAppPause: Duration = .seconds(5)
        /// How long the short pause lasts for an app this instance keeps finding unconfigured; after it, its
        /// entries wait the backoff of failed deliveries (an app removed for good, or a single instance,
        /// must not put its whole backlog through the store every few seconds for its maximum age).
        public var unknownAppWindow: Duration = .seconds(600)
        /// The deadline of one delivery.
        public var deliveryTimeout: Duration = .seconds(30)
        /// Backoff and give-up rules.
        public var retry = RetryPolicy()
        /// Where lanes run (lane *i* and its deliveries on `executors[i % count]`); empty: Swift's global
        /// executor. The composition root gives the event loops' executors, so that a delivery runs on the
        /// loop of the provider connection it goes over instead of crossing threads there and back, and a
        /// helper lane's pauses use its loop's timer.
        public var executors: [any PollExecutor] = []

        /// The defaults.
        public init() {}
    }

    private let dispatcher: Dispatcher
    private let store: any PushStore
    private let metrics: DeliveryMetrics
    private let wakeUp: OutboxWakeUp
    private let configuration: Configuration
    private let owner: String
    private let observers: [String: any DeliveryOutcomeObserver]
    private let logger: Logger
    private let claimClock = OutboxClaimClock()
    private let pace: OutboxAppPace
    private let outstanding = OutboxOutstandingParts()
    private let backlog = OutboxBacklogMark()
    /// The apps this instance found entries of without configuring them: each spell logged once.
    private let unknownApps: FirstSightings

    public var description: String { "OutboxWorker" }

    /// Creates a worker.
    /// - Parameter owner: this instance's name in leases; unique per process.
    public init(
        dispatcher: Dispatcher,
        store: any PushStore,
        metrics: DeliveryMetrics,
        wakeUp: OutboxWakeUp,
        configuration: Configuration = Configuration(),
        owner: String = "pushgate-\(UUID().uuidString.prefix(8))",
        observers: [any DeliveryOutcomeObserver] = [],
        logger: Logger
    ) {
        self.observers = Dictionary(observers.map { ($0.frontEnd, $0) }, uniquingKeysWith: { first, _ in first })
        self.pace = OutboxAppPace(floor: configuration.shortestRoundPatience)
        self.dispatcher = dispatcher
        self.store = store
        self.metrics = metrics
        self.wakeUp = wakeUp
        self.configuration = configuration
        // A spell without the app lasts while its entries keep coming round, which after the window is at the
        // backoff's longest delay.
        self.unknownApps = FirstSightings(gap: configuration.unknownAppWindow + configuration.retry.maximumDelay * 2)
        self.owner = owner
        self.logger = logger
    }

    public func run() async throws {
        self.wakeUp.handOff.open(owner: self.owner, lease: self.configuration.lease)
        defer {
            let waiting = self.wakeUp.handOff.close()
            if waiting > 0 {
                self.logger.notice("outbox: entries left for a later claim", metadata: ["entries": "\(waiting)"])
            }
        }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                // The first lane wakes on enqueues and polls the store; the others help while a backlog
                // lasts (the latest round was full), so the next round's store writes overlap this round's
                // deliveries, and otherwise wait for the next full round without asking the store. While
                // front ends enqueue, the others give way.
                let executors = self.configuration.executors
                for lane in 0..<max(1, self.configuration.lanes) {
                    // The helpers' pauses use the lane's loop timer, where there is one: no other thread wakes.
                    let executor: (any PollExecutor)? = executors.isEmpty ? nil : executors[lane % executors.count]
                    group.addTask(executorPreference: executor) {
                        while !Task.isCancelled {
                            if lane > 0, self.wakeUp.signalled(within: self.configuration.helperQuietPeriod) {
                                try? await executor.sleep(for: self.configuration.helperQuietPeriod)
                                continue
                            }
                            if lane > 0, !self.backlog.seen {
                                await self.backlog.waitForBacklog()
                                continue
                            }
                            let (handled, waited) = await self.runRound()
                            self.backlog.record(roundWasFull: self.isFull(round: handled))
                            // A round whose every part went on by itself (apps that hang or fail) is no
                            // reason to take the next at once: the first lane waits for news like an idle
                            // one, instead of claiming again and again while the other apps are quiet.
                            if lane == 0, handled == 0 || !waited { await self.wakeUp.wait(timeout: self.configuration.pollInterval) }
                        }
                    }
                }
            }
        }
        // Parts detached from their lanes finish and store their outcomes before the worker stops.
        await self.outstanding.waitForAll()
    }

    /// Whether a round that handled `tokens` tokens was full: a round takes whole entries, so one that
    /// stopped within an entry's size of `batchSize` may have stopped only because the next entry did not
    /// fit (a round of one 100-token entry is full at the default 128).
    func isFull(round tokens: Int) -> Bool {
        tokens > 0 && tokens > self.configuration.batchSize - Dispatcher.tokensPerOutboxEntry
    }

    /// One entry to deliver: handed over by this instance's enqueues, or claimed from the store.
    private struct Work: Sendable {
        let id: Int64
        let appID: String
        /// The front end that queued it.
        let frontEnd: String
        /// The tokens it delivers to (at least one).
        let tokens: [String]
        let attempts: Int
        let createdAt: Date
        /// When this worker's claim on it ends (at the latest).
        let leaseUntil: Date
        /// Nil when a claimed entry cannot be read.
        let content: OutboxContent?
    }

    /// Takes one batch of whole entries holding about `batchSize` tokens (handed-over entries first, then
    /// claimed ones), delivers every token of it and returns how many tokens it handled, and whether the
    /// lane waited for any of its parts.
    func runRound() async -> (handled: Int, waited: Bool) {
        // A handed-over entry whose lease would end before its delivery's deadline is left to be claimed
        // when the lease ends, so no other worker ever delivers it while this one does.
        let leaseNeeded = Date().addingTimeInterval(self.configuration.deliveryTimeout.timeInterval + 1)
        var work = self.wakeUp.handOff.take(self.configuration.batchSize).filter { $0.leaseUntil > leaseNeeded }.map { entry in
            Work(
                id: entry.id, appID: entry.appID, frontEnd: entry.frontEnd, tokens: entry.tokens, attempts: 1, createdAt: entry.createdAt,
                leaseUntil: entry.leaseUntil, content: entry.content
            )
        }
        let handedOver = work.reduce(0) { $0 + $1.tokens.count }
        // The store is asked when nothing was handed over, and otherwise once a poll interval, so entries
        // due again (retries, other instances' leftovers) are not starved by a steady flow of new ones.
        if handedOver < self.configuration.batchSize, work.isEmpty || self.claimClock.due(every: self.configuration.pollInterval) {
            work += await self.claim(limit: self.configuration.batchSize - handedOver)
        }
        guard !work.isEmpty else { return (0, false) }
        let total = work.reduce(0) { $0 + $1.tokens.count }
        // One part per app, in the order the apps first appear: each is delivered and settled by a task of
        // its own, so an app whose provider hangs holds up neither the others' settling nor, past its
        // patience, this lane (``OutboxAppPace``).
        var parts: [(appID: String, work: [Work])] = []
        var partOfApp: [String: Int] = [:]
        for item in work {
            if let index = partOfApp[item.appID] {
                parts[index].work.append(item)
            } else {
                partOfApp[item.appID] = parts.count
                parts.append((item.appID, [item]))
            }
        }
        // The lane waits for the parts of apps that are not failing and have no part detached already.
        let waited = parts.map { !self.dispatcher.isFailing($0.appID) ? self.pace.patience($0.appID) : nil }
        let patiences = waited.compactMap { $0 }
        let round = patiences.isEmpty ? nil : OutboxRoundWait(
            parts: patiences.count, patience: patiences.max()!,
            usual: parts.indices.filter { waited[$0] != nil }.map { self.pace.usual(parts[$0].appID) }.max()!
        )
        for (index, (appID, items)) in parts.enumerated() {
            let part = OutboxRoundPart(appID: appID, pace: self.pace, round: waited[index] == nil ? nil : round)
            if waited[index] == nil {
                part.detachIfOut()
            } else {
                round?.add(part)
            }
            // Deliveries run to completion even when shutdown cancels the loop: their outcome must be stored.
            self.outstanding.run {
                await self.deliverAndSettle(items)
                part.finish()
            }
        }
        if let round { await self.wakeUp.listening({ round.newWorkArrived(for: $0) }) { await round.wait() } }
        return (total, round != nil)
    }

    /// Delivers every token of `batch` (entries of one app) at once, then completes the entries that
    /// finished and reschedules the others, each in one store write.
    private func deliverAndSettle(_ batch: [Work]) async {
        // Each token's attempt lands at its place: the entries' tokens one after another.
        let total = batch.reduce(0) { $0 + $1.tokens.count }
        let handled = await withTaskGroup(of: Attempt.self) { group in
            var handled = [Handled?](repeating: nil, count: total)
            var place = 0
            for item in batch {
                for token in item.tokens {
                    group.addTask { [place] in Attempt(place: place, handled: await self.handle(item, token: token)) }
                    place += 1
                }
            }
            for await attempt in group { handled[attempt.place] = attempt.handled }
            return handled
        }
        var finished: [Settled] = []
        var retried: [Settled] = []
        var retries: [OutboxRetry] = []
        var start = 0
        for entry in batch {
            let end = start + entry.tokens.count
            let (settled, retry) = Self.settle(entry, handled[start..<end])
            start = end
            if let retry {
                retries.append(retry)
                retried.append(settled)
            } else {
                finished.append(settled)
            }
        }
        async let completed: Void = self.complete(finished)
        await self.reschedule(retries, finishing: retried)
        await completed
    }

    /// What the round's attempts mean for one entry (`handled` in the order of its tokens): the tokens it
    /// finished with (delivered, refused or given up) and, when some are to be tried again, the retry that
    /// keeps only those, in their order, due at the earliest time any of them asked for.
    private static func settle(_ entry: Work, _ handled: ArraySlice<Handled?>) -> (Settled, OutboxRetry?) {
        var done: [TokenOutcome] = []
        var again: [String] = []
        var first: (notBefore: Date, error: String)?
        // Every attempt of the round has reported: none is nil.
        for case let item? in handled {
            switch item {
            case .finished(let token, let outcome):
                done.append(TokenOutcome(token: token, outcome: outcome))
            case .retry(let token, let notBefore, let error):
                again.append(token)
                if first.map({ notBefore < $0.notBefore }) ?? true { first = (notBefore, error) }
            }
        }
        let settled = Settled(work: entry, outcomes: done)
        guard let first else { return (settled, nil) }
        let retry = OutboxRetry(
            id: entry.id, notBefore: first.notBefore, error: first.error, remainingTokens: again.count == entry.tokens.count ? nil : again
        )
        return (settled, retry)
    }

    /// Claims due entries holding at most `limit` tokens (at least one entry) from the store and reads them
    /// (entries queued together share their payload: each distinct payload is decoded once).
    private func claim(limit: Int) async -> [Work] {
        let entries: [OutboxEntry]
        // The store's lease starts no earlier than this.
        let claimed = Date()
        let leaseUntil = claimed.addingTimeInterval(self.configuration.lease.timeInterval)
        do {
            entries = try await self.store.claimDue(now: claimed, limit: limit, leaseFor: self.configuration.lease, owner: self.owner)
        } catch {
            self.logger.warningUnlessStopping("outbox: cannot claim entries", error: error)
            return []
        }
        var decoded: [HashedBytes: OutboxContent?] = [:]
        return entries.map { entry in
            let key = HashedBytes(entry.message.payload)
            let content: OutboxContent?
            // A payload that cannot be read is remembered too (as nil) and not decoded again.
            if let known = decoded[key] {
                content = known
            } else {
                content = (try? OutboxPayloadCoding.decodeWithReport(key.bytes)).map { OutboxContent(notification: $0.0, report: $0.1) }
                decoded[key] = content
            }
            return Work(
                id: entry.id, appID: entry.message.appID, frontEnd: entry.message.frontEnd, tokens: entry.message.pushTokens, attempts: entry.attempts,
                createdAt: entry.createdAt, leaseUntil: leaseUntil, content: content
            )
        }
    }

    /// One token's attempt: its place among the round's tokens and what became of it.
    private struct Attempt: Sendable {
        let place: Int
        let handled: Handled
    }

    /// A token an entry finished with, and how.
    private struct TokenOutcome: Sendable {
        let token: String
        let outcome: DeliveryOutcome
    }

    /// An entry and the tokens the round finished with.
    private struct Settled: Sendable {
        let work: Work
        let outcomes: [TokenOutcome]
    }

    /// What became of one token of a round.
    private enum Handled: Sendable {
        /// Delivered, refused or given up: it leaves the outbox at the end of the round.
        case finished(token: String, outcome: DeliveryOutcome)
        /// To be tried again no earlier than `notBefore`.
        case retry(token: String, notBefore: Date, error: String)
    }

    /// Delivers one token of an entry and says what becomes of it.
    private func handle(_ entry: Work, token: String) async -> Handled {
        let appID = entry.appID
        let outcome: DeliveryOutcome
        if let queued = entry.content?.notification {
            // An entry claimed more than once was tried before (handed over, it is on its first try).
            let tried = entry.attempts > 1
            guard case .found(let provider) = self.dispatcher.directory.lookup(appID) else {
                // A stated time to live that ran out ends the entry whether or not this instance has the app.
                if queued.timeToLive != nil, QueuedLifetime.remaining(of: queued, age: Date().timeIntervalSince(entry.createdAt), tried: tried) == nil {
                    return self.expired(appID: appID, token: token)
                }
                // The app was removed (or renamed) by a reload or a restart, or only another instance on the
                // database configures it yet: its entries wait, within their maximum age, so that adding it
                // back loses nothing, and come round again after a short fixed pause, so that an instance
                // that has the app soon takes them.
                return self.unknownApp(entry, token: token)
            }
            // The app's own time to live (a Web Push app's `ttl`) counts from when it was queued, like a
            // stated one.
            var stated = queued
            if stated.timeToLive == nil { stated.timeToLive = provider.defaultTimeToLive }
            guard let notification = QueuedLifetime.remaining(of: stated, age: Date().timeIntervalSince(entry.createdAt), tried: tried) else {
                return self.expired(appID: appID, token: token)
            }
            outcome = await self.dispatcher.deliver(
                notification, via: provider, token: token, deadline: .now + self.configuration.deliveryTimeout, frontEnd: entry.frontEnd
            )
        } else {
            outcome = .rejected(reason: "unreadable outbox entry")
        }
        switch outcome {
        case .delivered, .invalidToken:
            return .finished(token: token, outcome: outcome)
        case .rejected(let reason):
            self.logger.notice("outbox: delivery refused", metadata: ["app": "\(appID)", "reason": "\(reason)"])
            return .finished(token: token, outcome: outcome)
        case .retryLater(let requested, let reason):
            return self.retry(entry, token: token, outcome: outcome, requested: requested, reason: reason)
        case .credentialsRefused(let reason):
            // The dispatcher reports refused credentials as retry later; should one get here, it waits alike.
            return self.retry(entry, token: token, outcome: outcome, requested: nil, reason: reason)
        }
    }

    /// A token whose notification's time to live ran out while it waited: the provider would have dropped
    /// it by then, so it is not sent.
    private func expired(appID: String, token: String) -> Handled {
        self.metrics.recordExpired(appID: appID)
        self.logger.notice("outbox: time to live ran out while queued; not delivered", metadata: ["app": "\(appID)"])
        return .finished(token: token, outcome: .rejected(reason: "its time to live ran out while it waited in the outbox"))
    }

    /// An entry of an app this instance does not configure: tried again after ``Configuration/unknownAppPause``
    /// (with up to a fifth more, so instances do not claim in step) during the first
    /// ``Configuration/unknownAppWindow`` of a spell without the app, then after the backoff of failed
    /// deliveries; given up past its maximum age.
    private func unknownApp(_ entry: Work, token: String) -> Handled {
        let appID = entry.appID
        let reason = "no app is configured for \(appID) on this instance"
        // A reload since the spell began may have configured the app and removed it again: a new spell.
        let sighting = self.unknownApps.sight(appID, epoch: self.dispatcher.reconfigurations)
        if sighting.isFirst {
            self.logger.notice("outbox: entries of an app this instance does not configure wait for an instance that does", metadata: ["app": "\(appID)"])
        }
        let pause = sighting.age < self.configuration.unknownAppWindow ? self.configuration.unknownAppPause * (1 + Double.random(in: 0..<0.2)) : nil
        return self.retry(entry, token: token, outcome: .retryLater(after: nil, reason: reason), requested: nil, reason: reason, delay: pause)
    }

    /// Schedules the token again, or gives it up when the next try would pass the entry's maximum age.
    /// - Parameter delay: the wait before the next try; nil: the retry policy's backoff.
    private func retry(_ entry: Work, token: String, outcome: DeliveryOutcome, requested: Duration?, reason: String, delay: Duration? = nil) -> Handled {
        let appID = entry.appID
        let age = Date().timeIntervalSince(entry.createdAt)
        let delay = delay ?? self.configuration.retry.delay(afterAttempts: entry.attempts, requested: requested, random: Double.random(in: 0..<1))
        if Duration.seconds(age) + delay > self.configuration.retry.maximumAge {
            self.metrics.recordGivenUp(appID: appID)
            self.logger.warning("outbox: giving up", metadata: ["app": "\(appID)", "attempts": "\(entry.attempts)", "reason": "\(reason)"])
            return .finished(token: token, outcome: outcome)
        }
        return .retry(token: token, notBefore: Date().addingTimeInterval(delay.timeInterval), error: reason)
    }

    /// Releases a round's entries to be tried again in one store write (each keeping only the tokens still
    /// to deliver), then tells the front ends that asked about the tokens those entries finished with.
    private func reschedule(_ retries: [OutboxRetry], finishing finished: [Settled]) async {
        guard !retries.isEmpty else { return }
        // Written once: a reschedule that committed although its caller heard a failure frees the entries,
        // which this worker may claim again at once (under the same owner name), and a second write would
        // then undo that claim. Unwritten, the entries are tried again when their leases end.
        do {
            _ = try await self.store.reschedule(retries, owner: self.owner)
        } catch {
            // The leases run out and the entries are tried again: at-least-once rather than lost.
            self.logger.error("outbox: cannot record retries", metadata: ["entries": "\(retries.count)", "error": "\(error)"])
            return
        }
        await self.report(finished)
    }

    /// Removes a round's finished entries in one store write, then tells the front ends that asked.
    private func complete(_ finished: [Settled]) async {
        guard !finished.isEmpty else { return }
        do {
            try await self.recordOutcome(leaseUntil: finished.map(\.work.leaseUntil).min() ?? .distantPast) {
                _ = try await self.store.complete(ids: finished.map(\.work.id), owner: self.owner)
            }
        } catch {
            // The leases run out and the entries are delivered again: at-least-once rather than lost.
            self.logger.error("outbox: cannot record outcomes", metadata: ["entries": "\(finished.count)", "error": "\(error)"])
            return
        }
        await self.report(finished)
    }

    /// Runs `write` (the removal of finished entries), again after each of
    /// ``Configuration/recordRetryPauses`` while it fails and the entries' leases (the earliest ends at
    /// `leaseUntil`) leave ``Configuration/recordRetryMargin`` after the pause; rethrows the last failure.
    /// A removal that did commit before its failure was reported removes nothing the second time (ids
    /// are never reused).
    private func recordOutcome(leaseUntil: Date, _ write: () async throws -> Void) async throws {
        var pauses = self.configuration.recordRetryPauses[...]
        while true {
            do {
                return try await write()
            } catch {
                guard !(error is CancellationError), let pause = pauses.popFirst(),
                      Date().addingTimeInterval((pause + self.configuration.recordRetryMargin).timeInterval) < leaseUntil
                else { throw error }
                self.logger.notice("outbox: recording finished entries failed; trying again", metadata: ["retry_in": "\(pause)", "error": "\(error)"])
                try? await Task.sleep(for: pause)
            }
        }
    }

    /// Tells each front end that asked for a report the outcome of each of its finished tokens.
    private func report(_ finished: [Settled]) async {
        for settled in finished {
            guard let report = settled.work.content?.report, let observer = self.observers[report.frontEnd] else { continue }
            for done in settled.outcomes {
                await observer.deliveryEnded(report, appID: settled.work.appID, token: done.token, outcome: done.outcome)
            }
        }
    }
}

/// When the worker last asked the store for due entries.
final class OutboxClaimClock: Sendable {
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    /// Whether `interval` has passed since the last time this said yes (yes the first time); saying yes
    /// starts the next interval.
    func due(every interval: Duration) -> Bool {
        let now = ContinuousClock.now
        return self.last.withLock { last in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
    }
}
