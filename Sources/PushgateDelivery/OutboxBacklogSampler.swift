import Foundation
public import Logging
import PushgateCore
public import PushgateStore
public import ServiceLifecycle

/// Reads each app's outbox backlog now and then and records it as metrics (``DeliveryMetrics``): how many
/// tokens wait and how long the oldest has waited. An app whose backlog emptied since the last reading is
/// recorded as 0.
///
/// Instances sharing a PostgreSQL outbox each report the same shared backlog. The first reading is made at
/// start; each reading is also kept in ``reading`` for the operator console.
public struct OutboxBacklogSampler: Service {
    private let store: any OutboxStore
    private let metrics: DeliveryMetrics
    private let interval: Duration
    private let logger: Logger
    /// The last reading.
    public let reading: OutboxBacklogReading

    /// The interval between two readings unless one is given.
    public static let defaultInterval: Duration = .seconds(15)

    /// Creates a sampler that reads the backlog every `interval` (configured apps start at 0: see
    /// ``DeliveryMetrics/prepare(appIDs:)``), keeping each reading in `reading` too.
    public init(
        store: any OutboxStore, metrics: DeliveryMetrics, interval: Duration = Self.defaultInterval, reading: OutboxBacklogReading = OutboxBacklogReading(),
        logger: Logger
    ) {
        self.reading = reading
        self.store = store
        self.metrics = metrics
        self.interval = interval
        self.logger = logger
    }

    /// Samples until graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var seen = await self.sample(after: [])
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: self.interval)
                } catch {
                    return
                }
                seen = await self.sample(after: seen)
            }
        }
    }

    /// Records one reading; apps in `previous` without entries now are recorded as empty.
    /// - Returns: the apps with entries now (`previous` when the store could not be read).
    func sample(after previous: Set<String>, now: Date = Date()) async -> Set<String> {
        let backlogs: [OutboxAppBacklog]
        do {
            backlogs = try await self.store.backlogByApp()
        } catch {
            self.logger.warningUnlessStopping("could not read the outbox backlog", error: error)
            return previous
        }
        self.reading.record(backlogs)
        for backlog in backlogs {
            // At most a year: a row's creation time is whatever was stored.
            let age = min(max(0, now.timeIntervalSince(backlog.oldestCreatedAt)), 365 * 86_400)
            self.metrics.recordBacklog(appID: backlog.appID, tokens: backlog.tokens, oldestAge: .milliseconds(Int64(age * 1000)))
        }
        let current = Set(backlogs.map(\.appID))
        for appID in previous.subtracting(current) {
            self.metrics.recordBacklog(appID: appID, tokens: 0, oldestAge: .zero)
        }
        return current
    }
}
