public import Foundation

/// What one app has waiting in the outbox (leased, due or not), for the backlog metrics.
public struct OutboxAppBacklog: Sendable, Equatable {
    /// The configured app the entries belong to.
    public var appID: String
    /// How many tokens its entries hold together.
    public var tokens: Int
    /// When its oldest entry was first accepted.
    public var oldestCreatedAt: Date

    /// Creates an app's backlog figures (stores build these from their rows).
    public init(appID: String, tokens: Int, oldestCreatedAt: Date) {
        self.appID = appID
        self.tokens = tokens
        self.oldestCreatedAt = oldestCreatedAt
    }
}
