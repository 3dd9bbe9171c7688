import CoreMetrics
import Foundation
import PushgateCore
import PushgateStore
import Logging
import PushgateHTTP
import ServiceLifecycle

/// gorush's counters: kept in the store (so every instance on one database reports the same totals in
/// `GET /api/stat/app`) and, per instance, as gorush's Prometheus metrics on `/metrics`.
///
/// Counts gather in memory and go to the store once a second (and at shutdown) in one write, instead of a
/// store write for every request and delivery; this instance's `/api/stat/app` adds what it has not
/// written yet, and other instances see it within a second (``StoredCounts``).
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

    /// One of the store's counters.
    enum Tally: Int, CaseIterable {
        case total, submitted, succeededTasks, failedTasks
        case iosSuccess, iosError, androidSuccess, androidError, huaweiSuccess, huaweiError

        static func success(_ platform: GorushNotification.Platform) -> Tally {
            switch platform {
            case .ios: .iosSuccess
            case .android: .androidSuccess
            case .huawei: .huaweiSuccess
            }
        }

        static func error(_ platform: GorushNotification.Platform) -> Tally {
            switch platform {
            case .ios: .iosError
            case .android: .androidError
            case .huawei: .huaweiError
            }
        }

        /// The Prometheus metric's name, as gorush names it.
        var metricLabel: String {
            switch self {
            case .total: "gorush_total_push_count"
            case .submitted: "gorush_submitted_tasks"
            case .succeededTasks: "gorush_success_tasks"
            case .failedTasks: "gorush_failure_tasks"
            case .iosSuccess: "gorush_ios_success"
            case .iosError: "gorush_ios_error"
            case .androidSuccess: "gorush_android_success"
            case .androidError: "gorush_android_fail"
            case .huaweiSuccess: "gorush_huawei_success"
            case .huaweiError: "gorush_huawei_fail"
            }
        }

        /// The store counter's name.
        var name: String {
            switch self {
            case .total: Name.total
            case .submitted: Name.submitted
            case .succeededTasks: Name.succeededTasks
            case .failedTasks: Name.failedTasks
            case .iosSuccess: Name.success(.ios)
            case .iosError: Name.error(.ios)
            case .androidSuccess: Name.success(.android)
            case .androidError: Name.error(.android)
            case .huaweiSuccess: Name.success(.huawei)
            case .huaweiError: Name.error(.huawei)
            }
        }
    }

    /// The counts in the store and those not written yet, by ``Tally``'s raw value (no counter name is
    /// made or hashed per request or delivery).
    let counts: StoredCounts
    /// How long a read waits for writes under way (``StoredCounts/longestWait``).
    static var longestWait: Duration { StoredCounts.longestWait }
    /// This instance's Prometheus counters, by ``Tally`` like ``counts`` (no key is hashed per delivery).
    private let metrics: [Counter]

    init(store: any CounterStore, factory: any MetricsFactory, logger: Logger) {
        self.counts = StoredCounts(names: Tally.allCases.map(\.name), store: store, label: "gorush", logger: logger)
        self.metrics = Tally.allCases.map { Counter(label: $0.metricLabel, factory: factory) }
    }

    private func metric(_ tally: Tally) -> Counter {
        self.metrics[tally.rawValue]
    }

    /// A request was accepted with `counts` targets, `queued` of them into the outbox.
    func accepted(counts: Int, queued: Int) {
        self.metric(.total).increment(by: counts)
        self.metric(.submitted).increment(by: queued)
        self.counts.add { unwritten in
            unwritten[Tally.total.rawValue] += Int64(counts)
            unwritten[Tally.submitted.rawValue] += Int64(queued)
        }
    }

    /// Deliveries ended: `succeeded` and `failed` on one platform; `fromQueue` when the outbox delivered them.
    func delivered(_ platform: GorushNotification.Platform, succeeded: Int, failed: Int, fromQueue: Bool) {
        if succeeded > 0 {
            self.metric(.success(platform)).increment(by: succeeded)
            if fromQueue { self.metric(.succeededTasks).increment(by: succeeded) }
        }
        if failed > 0 {
            self.metric(.error(platform)).increment(by: failed)
            if fromQueue { self.metric(.failedTasks).increment(by: failed) }
        }
        self.counts.add { unwritten in
            unwritten[Tally.success(platform).rawValue] += Int64(succeeded)
            unwritten[Tally.error(platform).rawValue] += Int64(failed)
            if fromQueue {
                unwritten[Tally.succeededTasks.rawValue] += Int64(succeeded)
                unwritten[Tally.failedTasks.rawValue] += Int64(failed)
            }
        }
    }

    /// Each counter: the store's value plus what this instance has not written yet, by ``Tally``
    /// (``StoredCounts/values()``).
    func values() async throws -> [Int64] {
        try await self.counts.values()
    }

    /// `GET /api/stat/app`'s figures for the operator console (the deployment's, as that endpoint gives
    /// them); a single `unavailable` figure when the store cannot be read.
    func figures() async -> [FrontEndFigure] {
        guard let values = try? await self.values() else {
            return [FrontEndFigure(key: "counters", label: "Counters", value: .text("unavailable"))]
        }
        func count(_ tally: Tally) -> FrontEndFigure.Value { .count(Int(values[tally.rawValue])) }
        var figures = [
            FrontEndFigure(key: "total_count", label: "Notifications (total_count)", value: count(.total)),
            FrontEndFigure(key: "submitted_tasks", label: "Queued (submitted_tasks)", value: count(.submitted)),
            FrontEndFigure(key: "success_tasks", label: "Queued delivered (success_tasks)", value: count(.succeededTasks)),
            FrontEndFigure(key: "failure_tasks", label: "Queued failed (failure_tasks)", value: count(.failedTasks)),
        ]
        for platform in [GorushNotification.Platform.ios, .android, .huawei] {
            figures.append(FrontEndFigure(key: "\(platform.name)_push_success", label: "\(platform.name) push_success", value: count(.success(platform))))
            figures.append(FrontEndFigure(key: "\(platform.name)_push_error", label: "\(platform.name) push_error", value: count(.error(platform))))
        }
        return figures
    }

    /// `GET /api/stat/app`'s body, in gorush's key order.
    func appStatus(version: String) async throws -> String {
        let platforms: [GorushNotification.Platform] = [.ios, .android, .huawei]
        let values = try await self.values()
        func value(_ tally: Tally) -> Int64 { values[tally.rawValue] }
        var text = "{\"version\":" + GoJSON.string(version) + ",\"busy_workers\":0"
        text += ",\"success_tasks\":\(value(.succeededTasks)),\"failure_tasks\":\(value(.failedTasks))"
        text += ",\"submitted_tasks\":\(value(.submitted)),\"total_count\":\(value(.total))"
        for platform in platforms {
            text += ",\"\(platform.name)\":{\"push_success\":\(value(.success(platform))),\"push_error\":\(value(.error(platform)))}"
        }
        return text + "}"
    }

    /// Writes the gathered counts once a second until shutdown, then once more.
    func run() async throws {
        try await self.counts.run()
    }

    /// Writes the gathered counts to the store now (``StoredCounts/flush()``).
    func flush() async {
        await self.counts.flush()
    }
}
