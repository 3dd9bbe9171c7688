import Foundation
public import Logging
import PushgateCore
public import PushgateStore
public import ServiceLifecycle

/// Deletes expired counters (duplicate-suppression windows, rate-limit windows) from the store now and
/// then, so the table holds only live ones.
public struct ExpiredCounterSweeper: Service {
    private let store: any CounterStore
    private let interval: Duration
    private let logger: Logger

    /// Creates a sweeper that runs every `interval`.
    public init(store: any CounterStore, interval: Duration = .seconds(300), logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    /// Sweeps every interval until graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: self.interval)
                } catch {
                    return
                }
                do {
                    let removed = try await self.store.purgeExpiredCounters(now: Date())
                    if removed > 0 { self.logger.debug("expired counters removed", metadata: ["count": "\(removed)"]) }
                } catch {
                    self.logger.warningUnlessStopping("could not remove expired counters", error: error)
                }
            }
        }
    }
}
