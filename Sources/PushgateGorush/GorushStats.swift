import CoreMetrics
import Foundation
import PushgateCore
import PushgateStore

/// gorush's counters: kept in the store (so every instance on one database reports the same totals in
/// `GET /api/stat/app`) and, per instance, as gorush's Prometheus metrics on `/metrics`.
final class GorushStats: Sendable {
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
    private let total: Counter
    private let submitted: Counter
    private let succeededTasks: Counter
    private let failedTasks: Counter
    private let success: [GorushNotification.Platform: Counter]
    private let failure: [GorushNotification.Platform: Counter]

    init(store: any PushStore, factory: any MetricsFactory) {
        self.store = store
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
        func value(_ name: String) -> Int64 { values[name] ?? 0 }
        var text = "{\"version\":" + GoJSON.string(version) + ",\"busy_workers\":0"
        text += ",\"success_tasks\":\(value(Name.succeededTasks)),\"failure_tasks\":\(value(Name.failedTasks))"
        text += ",\"submitted_tasks\":\(value(Name.submitted)),\"total_count\":\(value(Name.total))"
        for platform in platforms {
            text += ",\"\(platform.name)\":{\"push_success\":\(value(Name.success(platform))),\"push_error\":\(value(Name.error(platform)))}"
        }
        return text + "}"
    }

    /// Adds to store counters that never expire; a store failure only loses the count.
    private func add(_ changes: [(String, Int)]) async {
        for (name, amount) in changes where amount != 0 {
            _ = try? await self.store.incrementCounter(name, by: Int64(amount), expiresAt: nil, now: Date())
        }
    }
}
