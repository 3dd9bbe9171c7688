import Foundation
public import Logging
import PushgateCore
public import PushgateStore
public import ServiceLifecycle

/// Deletes expired counters (duplicate-suppression windows, rate-limit windows) and invalid-token
/// records older than ``invalidTokenRetention`` from the store now and then, so neither table grows with
/// every distinct key or token an outsider sends.
public struct ExpiredCounterSweeper: Service {
    private let store: any CounterStore & InvalidTokenStore
    private let interval: Duration
    private let invalidTokenRetention: Duration
    private let logger: Logger

    /// How long a provider's word that a token is invalid is kept: 30 days.
    public static let defaultInvalidTokenRetention = Duration.seconds(30 * 86_400)

    /// Creates a sweeper that runs every `interval`.
    public init(
        store: any CounterStore & InvalidTokenStore, interval: Duration = .seconds(300),
        invalidTokenRetention: Duration = ExpiredCounterSweeper.defaultInvalidTokenRetention, logger: Logger
    ) {
        self.store = store
        self.interval = interval
        self.invalidTokenRetention = invalidTokenRetention
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
                do {
                    let cutoff = Date().addingTimeInterval(-TimeInterval(self.invalidTokenRetention.wholeMilliseconds) / 1000)
                    let removed = try await self.store.purgeInvalidTokens(recordedBefore: cutoff)
                    if removed > 0 { self.logger.debug("old invalid-token records removed", metadata: ["count": "\(removed)"]) }
                } catch {
                    self.logger.warningUnlessStopping("could not remove old invalid-token records", error: error)
                }
            }
        }
    }
}
