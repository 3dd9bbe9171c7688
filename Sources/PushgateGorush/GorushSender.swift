import Foundation
import Logging
import PushgateConfig
import PushgateCore
import PushgateDelivery

/// What gorush's HTTP and gRPC fronts share: notifications in, provider requests out, gorush's counts and
/// failure entries back. Asynchronously (gorush's default) every provider request goes to the durable
/// outbox in one store transaction; with `sync: true` it waits for the providers and lists every failed
/// token. Failures known before delivery (an app that does not exist, an empty token, `data.aps` beside
/// alert fields) are listed in both modes, and every failure goes to the feedback webhook when one is
/// configured.
struct GorushSender: Sendable {
    /// What the caller gets back.
    struct Result: Sendable {
        /// gorush's `counts`.
        var counts: Int
        /// Failures, in gorush's log-entry shape.
        var logs: [GorushLogEntry]
        /// Notifications sent nowhere and not in `logs`, as gorush leaves them out of its answer: refused
        /// by FCM's checks before sending, or for a platform no app serves.
        var dropped = 0
    }

    /// Why nothing was sent.
    enum Failure: Error {
        /// The caller's token may not send through this app.
        case forbidden(app: String)
        /// The store could not take the notifications.
        case storeUnavailable(any Error)
    }

    let settings: GorushSettings
    let planner: GorushPlanner
    let dispatcher: Dispatcher
    let stats: GorushStats
    let feedback: GorushFeedback?
    let logger: Logger
    /// Delivery slots shared by every synchronous request.
    let slots = ConcurrencyGate(permits: GorushSender.sharedSlots)

    /// How many deliveries of one synchronous request are with providers at once.
    static let deliveriesInFlight = 64
    /// How many deliveries of all synchronous requests together are with providers at once: below the
    /// dispatcher's default in-flight limit per app (512).
    static let sharedSlots = 256

    /// Sends `notifications`, through `allowedApps` only when given.
    func send(_ notifications: [GorushNotification], allowedApps: Set<String>?) async throws(Failure) -> Result {
        let plan = self.planner.plan(notifications)
        if let allowedApps, let forbidden = plan.appIDs.subtracting(allowedApps).sorted().first {
            throw .forbidden(app: forbidden)
        }
        do {
            let logs = try await (self.settings.sync ? self.deliverNow(plan, notifications: notifications) : self.enqueue(plan, notifications: notifications))
            return Result(counts: plan.counts, logs: logs, dropped: plan.unlisted.count + plan.unserved)
        } catch {
            throw .storeUnavailable(error)
        }
    }

    /// Asynchronous mode: everything to the outbox at once; the answer lists only the refusals.
    private func enqueue(_ plan: GorushPlan, notifications: [GorushNotification]) async throws -> [GorushLogEntry] {
        try await self.dispatcher.enqueue(self.queued(plan.deliveries, notifications: notifications))
        self.stats.accepted(counts: plan.counts, queued: plan.deliveries.count)
        await self.finish(refusals: plan.refusals, unlisted: plan.unlisted, failures: [], succeeded: [:])
        return plan.refusals
    }

    /// Synchronous mode: delivers and waits; what providers cannot take now is queued (and reported
    /// through the webhook if it fails later), the rest listed.
    private func deliverNow(_ plan: GorushPlan, notifications: [GorushNotification]) async throws -> [GorushLogEntry] {
        let started = ContinuousClock.now
        let deadline = started + self.settings.syncTimeout
        let deliveries = plan.deliveries
        let outcomes = await withTaskGroup(of: (Int, DeliveryOutcome).self) { group in
            var outcomes = [DeliveryOutcome?](repeating: nil, count: deliveries.count)
            for (position, delivery) in deliveries.enumerated() {
                if position >= Self.deliveriesInFlight, let (done, outcome) = await group.next() { outcomes[done] = outcome }
                group.addTask {
                    guard case .found(let provider) = self.dispatcher.directory.lookup(delivery.appID) else {
                        return (position, .rejected(reason: "app \(delivery.appID) is not configured"))
                    }
                    // Requests share the slots, so many synchronous requests wait their turn instead of
                    // overrunning the app's in-flight limit (which would queue most of their tokens).
                    let outcome = await self.slots.withPermit(until: deadline) {
                        await self.dispatcher.deliver(delivery.notification, via: provider, token: delivery.token, deadline: deadline, frontEnd: GorushFrontEnd.name)
                    }
                    return (position, outcome ?? .retryLater(after: nil, reason: "no delivery slot before the deadline"))
                }
            }
            for await (done, outcome) in group { outcomes[done] = outcome }
            return outcomes
        }
        var failures: [GorushLogEntry] = []
        var succeeded: [GorushNotification.Platform: Int] = [:]
        var later: [GorushDelivery] = []
        // A time to live counts from the request: what the attempt took is taken off it before the rest is
        // queued, and one with nothing left (or 0, "now or never", after its try) is a failure, listed in
        // the plan's order.
        let waited = (ContinuousClock.now - started).timeInterval
        for (delivery, outcome) in zip(deliveries, outcomes) {
            switch outcome {
            case .delivered?: succeeded[delivery.platform, default: 0] += 1
            case .retryLater?, nil:
                guard let left = QueuedLifetime.remaining(of: delivery.notification, age: waited, tried: true) else {
                    failures.append(self.entry(delivery, notifications: notifications, error: "its time to live ran out before it could be delivered"))
                    continue
                }
                var queued = delivery
                queued.notification = left
                later.append(queued)
            case let outcome?:
                let error = GorushErrorText.text(for: outcome, platform: delivery.platform) ?? ""
                failures.append(self.entry(delivery, notifications: notifications, error: error))
            }
        }
        if !later.isEmpty {
            do {
                try await self.dispatcher.enqueue(self.queued(later, notifications: notifications))
            } catch {
                // They were not delivered and cannot be queued: the caller must hear of each.
                failures += later.map { self.entry($0, notifications: notifications, error: "not delivered in time and could not be queued") }
            }
        }
        self.stats.accepted(counts: plan.counts, queued: later.count)
        await self.finish(refusals: plan.refusals, unlisted: plan.unlisted, failures: failures, succeeded: succeeded)
        return plan.refusals + failures
    }

    /// Counts and reports what ended in this request (`unlisted`: failures left out of the answer, logged
    /// here as gorush logs them, without tokens or content).
    private func finish(
        refusals: [GorushLogEntry], unlisted: [GorushLogEntry], failures: [GorushLogEntry], succeeded: [GorushNotification.Platform: Int]
    ) async {
        for entry in unlisted {
            self.logger.warning("gorush: a notification was not sent", metadata: ["platform": "\(entry.platform)", "error": "\(entry.error)"])
        }
        var failed: [String: Int] = [:]
        for entry in refusals + unlisted + failures { failed[entry.platform, default: 0] += 1 }
        for platform in [GorushNotification.Platform.ios, .android, .huawei] {
            let ok = succeeded[platform] ?? 0
            let bad = failed[platform.name] ?? 0
            if ok + bad > 0 { self.stats.delivered(platform, succeeded: ok, failed: bad, fromQueue: false) }
        }
        await self.feedback?.send(refusals + unlisted + failures)
    }

    private func entry(_ delivery: GorushDelivery, notifications: [GorushNotification], error: String) -> GorushLogEntry {
        GorushLogEntry(
            failureOf: notifications[delivery.index], platform: delivery.platform, token: delivery.token, error: error,
            hideToken: self.settings.hideToken, hideMessages: self.settings.hideMessages
        )
    }

    /// Deliveries grouped for the outbox: one group per notification and app (a topic send apart). The
    /// planner builds one provider notification for all device tokens of a notification and app, so the
    /// group is known without comparing notifications.
    private func queued(_ deliveries: [GorushDelivery], notifications: [GorushNotification]) -> [Dispatcher.Queued] {
        var groups: [Dispatcher.Queued] = []
        var current: (index: Int, appID: String, isTopicSend: Bool)?
        for delivery in deliveries {
            if let open = current, open.index == delivery.index, open.appID == delivery.appID, !open.isTopicSend, !delivery.isTopicSend {
                groups[groups.count - 1].tokens.append(delivery.token)
                continue
            }
            let source = notifications[delivery.index]
            let report = DeliveryReport(
                frontEnd: GorushFrontEnd.name,
                context: GorushOutcomeObserver.context(notifID: source.notifID, platform: delivery.platform, message: source.message)
            )
            groups.append(
                Dispatcher.Queued(delivery.notification, appID: delivery.appID, frontEnd: GorushFrontEnd.name, tokens: [delivery.token], report: report)
            )
            current = (delivery.index, delivery.appID, delivery.isTopicSend)
        }
        return groups
    }
}
