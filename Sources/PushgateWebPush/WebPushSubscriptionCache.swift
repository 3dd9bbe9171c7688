import PushgateProviderSupport

/// Subscriptions already parsed (JSON, URL and public-key validation), by the exact text of their token:
/// a ``ParsedTokenCache`` of at most ``capacity`` subscriptions, first in, first out; tokens that do not
/// parse are parsed again on each use.
final class WebPushSubscriptionCache: Sendable {
    /// Parses a token into a subscription.
    typealias Parser = @Sendable (String) throws(WebPushSubscription.ParseError) -> WebPushSubscription

    private let kept: ParsedTokenCache<WebPushSubscription>
    private let parse: Parser

    /// Creates an empty cache.
    /// - Parameters:
    ///   - capacity: the most subscriptions kept; at least 1.
    ///   - parse: how a token becomes a subscription (tests count the calls).
    init(
        capacity: Int = 4096,
        parse: @escaping Parser = { token throws(WebPushSubscription.ParseError) in try WebPushSubscription(token: token) }
    ) {
        self.kept = ParsedTokenCache(capacity: capacity)
        self.parse = parse
    }

    /// The most subscriptions kept.
    var capacity: Int { self.kept.capacity }

    /// How many subscriptions are kept.
    var count: Int { self.kept.count }

    /// The subscription in `token`, parsed on first use.
    /// - Throws: ``WebPushSubscription/ParseError`` when the token is not a usable subscription (every time).
    func subscription(for token: String) throws(WebPushSubscription.ParseError) -> WebPushSubscription {
        try self.kept.value(for: token, parse: self.parse)
    }
}
