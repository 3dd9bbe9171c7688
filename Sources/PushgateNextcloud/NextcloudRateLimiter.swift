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
        let name = "nextcloud-rate:\(identity):\(windowStart)"
        let expiry = Date(timeIntervalSince1970: TimeInterval(windowStart + window))
        let total = try await self.store.incrementCounter(name, by: Int64(entries), expiresAt: expiry, now: now)
        guard total <= Int64(self.limit.notifications) else {
            // A refused batch uses none of the allowance: smaller batches that fit still go (Nextcloud sends
            // a refused batch no more, so counting it would lose them too). If the store fails now, the
            // batch stays counted until the window ends.
            _ = try? await self.store.incrementCounter(name, by: -Int64(entries), expiresAt: expiry, now: now)
            return false
        }
        return true
    }
}

extension Duration {
    fileprivate var wholeSeconds: Int64 { self.components.seconds }
}
