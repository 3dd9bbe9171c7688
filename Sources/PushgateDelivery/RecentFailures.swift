public import Foundation
import Synchronization

/// The last failed deliveries of this instance (not shared between instances), newest last: what the
/// operator console lists. Tokens are kept as fingerprints only.
public final class RecentFailures: Sendable {
    /// One failed delivery.
    public struct Failure: Sendable, Equatable {
        /// When it ended.
        public var time: Date
        /// The app.
        public var appID: String
        /// The front end it came through.
        public var frontEnd: String
        /// The token's fingerprint (`t:…`), never the token.
        public var tokenFingerprint: String
        /// The outcome's label.
        public var outcome: String
        /// The provider's reason.
        public var reason: String

        /// Creates a failure.
        public init(time: Date, appID: String, frontEnd: String, tokenFingerprint: String, outcome: String, reason: String) {
            self.time = time
            self.appID = appID
            self.frontEnd = frontEnd
            self.tokenFingerprint = tokenFingerprint
            self.outcome = outcome
            self.reason = reason
        }
    }

    private struct Ring {
        var items: [Failure] = []
        var next = 0
    }

    /// How many are kept.
    public let capacity: Int
    private let ring = Mutex(Ring())

    /// An empty list that keeps the last `capacity` failures.
    public init(capacity: Int = 200) {
        self.capacity = max(1, capacity)
    }

    /// Keeps a failure, forgetting the oldest when full.
    public func record(_ failure: Failure) {
        let capacity = self.capacity
        self.ring.withLock { ring in
            if ring.items.count < capacity {
                ring.items.append(failure)
            } else {
                ring.items[ring.next] = failure
            }
            ring.next = (ring.next + 1) % capacity
        }
    }

    /// The failures kept, newest first.
    public var newestFirst: [Failure] {
        self.ring.withLock { ring in
            guard ring.items.count == self.capacity else { return ring.items.reversed() }
            return Array((ring.items[ring.next...] + ring.items[..<ring.next]).reversed())
        }
    }
}
