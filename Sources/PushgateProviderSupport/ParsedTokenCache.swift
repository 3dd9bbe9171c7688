import Synchronization

/// Values parsed from tokens (a Web Push subscription), kept by the exact text
/// of their token so that a token delivered to again is not parsed again.
///
/// At most ``capacity`` values are kept; when full, the one kept longest is dropped (first in, first out).
/// Tokens that do not parse are not kept: each use of one is parsed again and fails the same way. Parsing
/// happens outside the lock, so concurrent deliveries only wait for a dictionary access.
public final class ParsedTokenCache<Value: Sendable>: Sendable {
    /// What the lock protects.
    private struct Storage {
        /// The kept values, by token.
        var values: [String: Value] = [:]
        /// The kept tokens in the order they were added, used as a ring once full.
        var insertionOrder: [String] = []
        /// The position in `insertionOrder` of the token to drop next, once full.
        var oldest = 0
    }

    /// The most values kept.
    public let capacity: Int
    private let storage = Mutex(Storage())

    /// Creates an empty cache that keeps at most `capacity` values (at least 1).
    public init(capacity: Int) {
        precondition(capacity > 0, "a parsed-token cache keeps at least one value")
        self.capacity = capacity
    }

    /// How many values are kept.
    public var count: Int { self.storage.withLock { $0.values.count } }

    /// The value of `token`: the kept one, or what `parse` makes of it (then kept).
    /// - Throws: what `parse` throws; nothing is kept then.
    public func value<Failure: Error>(for token: String, parse: (String) throws(Failure) -> Value) throws(Failure) -> Value {
        if let kept = self.storage.withLock({ $0.values[token] }) { return kept }
        let parsed = try parse(token)
        self.storage.withLock { storage in
            // Another delivery may have parsed and kept the same token meanwhile.
            guard storage.values[token] == nil else { return }
            if storage.insertionOrder.count < self.capacity {
                storage.insertionOrder.append(token)
            } else {
                storage.values[storage.insertionOrder[storage.oldest]] = nil
                storage.insertionOrder[storage.oldest] = token
                storage.oldest = (storage.oldest + 1) % self.capacity
            }
            storage.values[token] = parsed
        }
        return parsed
    }
}
