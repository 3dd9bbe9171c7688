import CoreMetrics
import Foundation
import PushgateCore
import PushgateStore
import Logging
import ServiceLifecycle
import Synchronization

/// gorush's counters: kept in the store (so every instance on one database reports the same totals in
/// `GET /api/stat/app`) and, per instance, as gorush's Prometheus metrics on `/metrics`.
///
/// Counts gather in memory and go to the store once a second (and at shutdown) in a few writes, instead
/// of a store write for every request and delivery; this instance's `/api/stat/app` adds what it has not
/// written yet, and other instances see it within a second.
final class GorushStats: Service, Sendable {
    /// The store counter names, as gorush names its seven (plus the queue's three).
    enum Name {
        static let total = "gorush:total-count"
        static let submitted = "gorush:submitted-tasks"
        static let succeededTasks = "gorush:success-tasks"
        static let failedTasks = "gorush:failure-tasks"
        static func success(_ platform: GorushNotification.Platform) -> String { "gorush:\(platform.name)-success-count" }
        static func error(_ platform: GorushNotification.Platform) -> String { "gorush:\(platform.name)-error-count" }
    }

    private let store: any PushStore
    private let pending = Mutex<[String: Int64]>([:])
    private let logger: Logger
    private let total: Counter
    private let submitted: Counter
    private let succeededTasks: Counter
    private let failedTasks: Counter
    private let success: [GorushNotification.Platform: Counter]
    private let failure: [GorushNotification.Platform: Counter]

    init(store: any PushStore, factory: any MetricsFactory, logger: Logger) {
        self.store = store
        self.logger = logger
        self.total = Counter(label: "gorush_total_push_count", factory: factory)
        self.submitted = Counter(label: "gorush_submitted_tasks", factory: factory)
        self.succeededTasks = Counter(label: "gorush_success_tasks", factory: factory)
        self.failedTasks = Counter(label: "gorush_failure_tasks", factory: factory)
        self.success = [
            .ios: Counter(label: "gorush_ios_success", factory: factory),
            .android: Counter(label: "gorush_android_success", factory: factory),
            .huawei: Counter(label: "gorush_huawei_success", factory: factory),
        ]
        self.failure = [
            .ios: Counter(label: "gorush_ios_error", factory: factory),
            .android: Counter(label: "gorush_android_fail", factory: factory),
            .huawei: Counter(label: "gorush_huawei_fail", factory: factory),
        ]
    }

    /// A request was accepted with `counts` targets, `queued` of them into the outbox.
    func accepted(counts: Int, queued: Int) async {
        self.total.increment(by: counts)
        self.submitted.increment(by: queued)
        await self.add([(Name.total, counts), (Name.submitted, queued)])
    }

    /// Deliveries ended: `succeeded` and `failed` on one platform; `fromQueue` when the outbox delivered them.
    func delivered(_ platform: GorushNotification.Platform, succeeded: Int, failed: Int, fromQueue: Bool) async {
        self.success[platform]?.increment(by: succeeded)
        self.failure[platform]?.increment(by: failed)
        var changes = [(Name.success(platform), succeeded), (Name.error(platform), failed)]
        if fromQueue {
            self.succeededTasks.increment(by: succeeded)
            self.failedTasks.increment(by: failed)
            changes += [(Name.succeededTasks, succeeded), (Name.failedTasks, failed)]
        }
        await self.add(changes)
    }

    /// `GET /api/stat/app`'s body, in gorush's key order.
    func appStatus(version: String) async throws -> String {
        let platforms: [GorushNotification.Platform] = [.ios, .android, .huawei]
        let names = [Name.total, Name.submitted, Name.succeededTasks, Name.failedTasks] + platforms.flatMap { [Name.success($0), Name.error($0)] }
        let values = try await self.store.counterValues(names, now: Date())
        let unwritten = self.pending.withLock { $0 }
        func value(_ name: String) -> Int64 { (values[name] ?? 0) + (unwritten[name] ?? 0) }
        var text = "{\"version\":" + GoJSON.string(version) + ",\"busy_workers\":0"
        text += ",\"success_tasks\":\(value(Name.succeededTasks)),\"failure_tasks\":\(value(Name.failedTasks))"
        text += ",\"submitted_tasks\":\(value(Name.submitted)),\"total_count\":\(value(Name.total))"
        for platform in platforms {
            text += ",\"\(platform.name)\":{\"push_success\":\(value(Name.success(platform))),\"push_error\":\(value(Name.error(platform)))}"
        }
        return text + "}"
    }

    /// Adds to the counts not yet written.
    private func add(_ changes: [(String, Int)]) async {
        self.pending.withLock { pending in
            for (name, amount) in changes where amount != 0 { pending[name, default: 0] += Int64(amount) }
        }
    }

    /// Writes the gathered counts once a second until shutdown, then once more.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if Task.isCancelled { break }
                await self.flush()
            }
        }
        await self.flush()
    }

    /// Writes the gathered counts to the store (counters that never expire); what cannot be written is
    /// kept for the next attempt.
    func flush() async {
        let taken = self.pending.withLock { pending in
            defer { pending = [:] }
            return pending
        }
        for (name, amount) in taken where amount != 0 {
            do {
                _ = try await self.store.incrementCounter(name, by: amount, expiresAt: nil, now: Date())
            } catch {
                self.pending.withLock { $0[name, default: 0] += amount }
                self.logger.debug("gorush: counters not written yet", metadata: ["error": "\(error)"])
            }
        }
    }
}
