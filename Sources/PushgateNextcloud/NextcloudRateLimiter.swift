import Crypto
import PushgateCore
public import Foundation
public import PushgateConfig
public import PushgateStore

/// Fair use per sending Nextcloud server: at most a configured number of notification entries per
/// window, counted in the shared store so every Pushgate instance behind a load balancer sees one count.
///
/// A server is known by its `X-Nextcloud-Subscription-Key` when it sends one, else by its address; the
/// counter's name carries a hash of that identity, never the key itself.
public struct NextcloudRateLimiter: Sendable {
    private let limit: NextcloudSettings.RateLimit
    private let store: any CounterStore

    /// Creates a limiter.
    public init(limit: NextcloudSettings.RateLimit, store: any CounterStore) {
        self.limit = limit
        self.store = store
    }

    /// Counts `entries` against `sender` and tells whether they are within the limit.
    /// - Parameters:
    ///   - entries: how many notifications the batch carries.
    ///   - sender: the sending server's identity (subscription key or address).
    ///   - now: the time of the request.
    /// - Throws: a store error; the caller decides whether to let the batch through.
    public func admit(entries: Int, sender: String, now: Date = Date()) async throws -> Bool {
        let window = max(1, self.limit.window.wholeSeconds)
        let seconds = Int64(now.timeIntervalSince1970)
        let windowStart = seconds - seconds % window
        let identity = Hex.lowercase(SHA256.hash(data: Array(sender.utf8)).prefix(12))
        let total = try await self.store.incrementCounter(
            "nextcloud-rate:\(identity):\(windowStart)", by: Int64(entries),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(windowStart + window)), now: now
        )
        return total <= Int64(self.limit.notifications)
    }
}

extension Duration {
    fileprivate var wholeSeconds: Int64 { self.components.seconds }
}
