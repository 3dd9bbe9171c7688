import Foundation
public import Logging
import PushgateCore
public import PushgateStore
public import ServiceLifecycle

/// Writes the in-memory delivery counts (``DeliveryTally``) to the store about once a second, in one
/// transaction, and deletes counts older than the retention now and then. A flush that fails keeps its
/// counts for the next one; the last flush runs at graceful shutdown.
public struct DeliveryCountFlusher: Service {
    private let tally: DeliveryTally
    private let store: any DeliveryCountStore
    private let interval: Duration
    private let retention: Duration
    private let logger: Logger

    /// Creates a flusher.
    /// - Parameters:
    ///   - store: a store whose calls end by a deadline (the gateway's ``BoundedStore``).
    ///   - interval: how often counts are written.
    ///   - retention: how long counts are kept (7 days).
    public init(tally: DeliveryTally, store: any DeliveryCountStore, interval: Duration = .seconds(1), retention: Duration = .seconds(7 * 86_400), logger: Logger) {
        self.tally = tally
        self.store = store
        self.interval = interval
        self.retention = retention
        self.logger = logger
    }

    /// Flushes every interval until graceful shutdown, then once more. Only the pause between writes ends
    /// at a graceful shutdown: a write under way is awaited, never abandoned (an abandoned write may still
    /// commit, and its counts, given back for the next write, would be stored twice).
    public func run() async throws {
        var lastPurge = ContinuousClock.now - .seconds(3600)
        while true {
            let interval = self.interval
            await cancelWhenGracefulShutdown { try? await Task.sleep(for: interval) }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            await self.flush()
            if ContinuousClock.now - lastPurge >= .seconds(600) {
                lastPurge = ContinuousClock.now
                await self.purge(now: Date())
            }
        }
        await self.flush()
    }

    /// Writes what the tally holds; puts it back when the store fails.
    public func flush() async {
        let counts = self.tally.take()
        guard !counts.isEmpty else { return }
        do {
            try await self.store.addDeliveryCounts(counts)
        } catch {
            self.tally.giveBack(counts)
            self.logger.warningUnlessStopping("could not store the delivery counts (kept for the next attempt)", error: error)
        }
    }

    /// Deletes counts older than the retention.
    func purge(now: Date) async {
        let seconds = Double(self.retention.components.seconds)
        do {
            let removed = try await self.store.purgeDeliveryCounts(before: DeliveryTally.minute(of: now.addingTimeInterval(-seconds)))
            if removed > 0 { self.logger.debug("old delivery counts removed", metadata: ["rows": "\(removed)"]) }
        } catch {
            self.logger.warningUnlessStopping("could not remove old delivery counts", error: error)
        }
    }
}
