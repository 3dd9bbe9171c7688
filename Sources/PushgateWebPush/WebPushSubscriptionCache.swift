import Synchronization

/// Subscriptions already parsed, by the exact text of their token, so a token delivered to again is not
/// parsed again (JSON, URL and public-key validation).
///
/// At most ``capacity`` subscriptions are kept; when full, the one kept longest is dropped (first in, first
/// out). Tokens that do not parse are not kept: each use of one is parsed again and fails the same way.
/// Parsing happens outside the lock, so concurrent deliveries only wait for a dictionary access.
final class WebPushSubscriptionCache: Sendable {
    /// Parses a token into a subscription.
    typealias Parser = @Sendable (String) throws(WebPushSubscription.ParseError) -> WebPushSubscription

    /// What the lock protects.
    private struct Storage {
        /// The kept subscriptions, by token.
        var subscriptions: [String: WebPushSubscription] = [:]
        /// The kept tokens in the order they were added, used as a ring once full.
        var insertionOrder: [String] = []
        /// The position in `insertionOrder` of the token to drop next, once full.
        var oldest = 0
    }

    /// The most subscriptions kept.
    let capacity: Int
    private let parse: Parser
    private let storage = Mutex(Storage())

    /// Creates an empty cache.
    /// - Parameters:
    ///   - capacity: the most subscriptions kept; at least 1.
    ///   - parse: how a token becomes a subscription (tests count the calls).
    init(
        capacity: Int = 4096,
        parse: @escaping Parser = { token throws(WebPushSubscription.ParseError) in try WebPushSubscription(token: token) }
    ) {
        precondition(capacity > 0, "a subscription cache keeps at least one subscription")
        self.capacity = capacity
        self.parse = parse
    }

    /// How many subscriptions are kept.
    var count: Int { self.storage.withLock { $0.subscriptions.count } }

    /// The subscription in `token`, parsed on first use.
    /// - Throws: ``WebPushSubscription/ParseError`` when the token is not a usable subscription (every time).
    func subscription(for token: String) throws(WebPushSubscription.ParseError) -> WebPushSubscription {
        if let kept = self.storage.withLock({ $0.subscriptions[token] }) { return kept }
        let parsed = try self.parse(token)
        self.storage.withLock { storage in
            // Another delivery may have parsed and kept the same token meanwhile.
            guard storage.subscriptions[token] == nil else { return }
            if storage.insertionOrder.count < self.capacity {
                storage.insertionOrder.append(token)
            } else {
                storage.subscriptions[storage.insertionOrder[storage.oldest]] = nil
                storage.insertionOrder[storage.oldest] = token
                storage.oldest = (storage.oldest + 1) % self.capacity
            }
            storage.subscriptions[token] = parsed
        }
        return parsed
    }
}
