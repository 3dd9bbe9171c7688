import Crypto
import Foundation
@testable import PushgateWebPush
import Synchronization
import Testing

/// Parsed subscriptions kept by token text.
@Suite("Web Push subscription cache")
struct WebPushSubscriptionCacheTests {
    /// Counts the tokens parsed, then parses them as the provider does.
    final class CountingParser: Sendable {
        private let calls = Mutex(0)
        var count: Int { self.calls.withLock { $0 } }

        func parse(_ token: String) throws(WebPushSubscription.ParseError) -> WebPushSubscription {
            self.calls.withLock { $0 += 1 }
            return try WebPushSubscription(token: token)
        }
    }

    static func cache(capacity: Int = 4096, counting parser: CountingParser) -> WebPushSubscriptionCache {
        WebPushSubscriptionCache(capacity: capacity) { token throws(WebPushSubscription.ParseError) in try parser.parse(token) }
    }

    static func expectEqual(_ first: WebPushSubscription, _ second: WebPushSubscription) {
        #expect(first.endpoint == second.endpoint)
        #expect(first.authSecret == second.authSecret)
        #expect(first.userAgentPublicKeyBytes == second.userAgentPublicKeyBytes)
        #expect(first.userAgentPublicKey.x963Representation == second.userAgentPublicKey.x963Representation)
    }

    @Test func aTokenIsParsedOnce() throws {
        let parser = CountingParser()
        let cache = Self.cache(counting: parser)
        let subscriber = TestFixtures.Subscriber()
        let token = subscriber.token(endpoint: "https://push.example/sub/1")
        let first = try cache.subscription(for: token)
        let second = try cache.subscription(for: token)
        #expect(parser.count == 1)
        #expect(cache.count == 1)
        Self.expectEqual(first, second)
        Self.expectEqual(first, try WebPushSubscription(token: token))
        #expect(first.authSecret == subscriber.authSecret)
        #expect(first.endpoint.absoluteString == "https://push.example/sub/1")
    }

    /// Tokens are keyed by their exact text: the same subscription written differently is another entry.
    @Test func differentTextIsADifferentEntry() throws {
        let parser = CountingParser()
        let cache = Self.cache(counting: parser)
        let subscriber = TestFixtures.Subscriber()
        let unpadded = try cache.subscription(for: subscriber.token(endpoint: "https://push.example/sub/1"))
        let padded = try cache.subscription(for: subscriber.token(endpoint: "https://push.example/sub/1", padded: true))
        #expect(parser.count == 2)
        #expect(cache.count == 2)
        Self.expectEqual(unpadded, padded)
    }

    @Test func invalidTokensFailEveryTimeAndAreNotKept() throws {
        let parser = CountingParser()
        let cache = Self.cache(counting: parser)
        let bad = #"{"endpoint": "https://push.example/x", "keys": {"p256dh": "BAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#
        let expected = try #require(throws: WebPushSubscription.ParseError.self) { try WebPushSubscription(token: bad) }
        for _ in 0..<3 {
            #expect(throws: expected) { try cache.subscription(for: bad) }
        }
        #expect(parser.count == 3)
        #expect(cache.count == 0)
    }

    /// At most `capacity` subscriptions are kept; the oldest go first.
    @Test func theBoundHolds() throws {
        let parser = CountingParser()
        let cache = Self.cache(capacity: 3, counting: parser)
        let subscriber = TestFixtures.Subscriber()
        let tokens = (0..<10).map { subscriber.token(endpoint: "https://push.example/sub/\($0)") }
        for (index, token) in tokens.enumerated() {
            #expect(try cache.subscription(for: token).endpoint.absoluteString == "https://push.example/sub/\(index)")
            #expect(cache.count == min(index + 1, 3))
        }
        #expect(parser.count == 10)
        // The three newest are kept, the rest parsed again.
        for token in tokens.suffix(3) { _ = try cache.subscription(for: token) }
        #expect(parser.count == 10)
        _ = try cache.subscription(for: tokens[0])
        #expect(parser.count == 11)
        #expect(cache.count == 3)
    }

    @Test func concurrentUseStaysWithinTheBound() async throws {
        let parser = CountingParser()
        let cache = Self.cache(capacity: 8, counting: parser)
        let subscriber = TestFixtures.Subscriber()
        let tokens = (0..<20).map { subscriber.token(endpoint: "https://push.example/sub/\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<200 {
                let token = tokens[round % tokens.count]
                group.addTask {
                    let subscription = try cache.subscription(for: token)
                    #expect(subscription.endpoint.absoluteString == "https://push.example/sub/\(round % 20)")
                }
            }
            try await group.waitForAll()
        }
        #expect(cache.count <= 8)
    }
}
