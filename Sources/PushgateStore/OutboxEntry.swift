public import Foundation

/// A notification accepted for later delivery, as it is handed to the outbox: one entry for one or more
/// tokens of one app, all sent the same payload (the tokens of one notification share one row rather than
/// taking one each).
public struct OutboxMessage: Sendable, Equatable {
    /// The configured app that delivers it.
    public var appID: String
    /// The front end that queued it (its name in logs and metrics, such as `gorush`): claims take turns
    /// across each app's front ends as they do across apps. Empty for entries queued before the outbox
    /// recorded it, which take their turns together.
    public var frontEnd: String
    /// The provider tokens to deliver to (at least one).
    public var pushTokens: [String]
    /// The provider-independent notification, encoded by the delivery layer.
    public var payload: [UInt8]
    /// The earliest time a worker may try it.
    public var notBefore: Date

    /// Creates a message for the outbox.
    /// - Precondition: `pushTokens` is not empty.
    public init(appID: String, frontEnd: String = "", pushTokens: [String], payload: [UInt8], notBefore: Date) {
        precondition(!pushTokens.isEmpty, "an outbox message has at least one token")
        self.appID = appID
        self.frontEnd = frontEnd
        self.pushTokens = pushTokens
        self.payload = payload
        self.notBefore = notBefore
    }

    /// Creates a message for one token.
    public init(appID: String, frontEnd: String = "", pushToken: String, payload: [UInt8], notBefore: Date) {
        self.init(appID: appID, frontEnd: frontEnd, pushTokens: [pushToken], payload: payload, notBefore: notBefore)
    }
}

/// A notification stored in the outbox, as a worker sees it after claiming it.
public struct OutboxEntry: Sendable, Equatable, Identifiable {
    /// The store's identifier for the entry.
    public var id: Int64
    /// The message as it was enqueued.
    public var message: OutboxMessage
    /// How many times it has been claimed, this claim included.
    public var attempts: Int
    /// When it was first accepted.
    public var createdAt: Date
    /// The error recorded by the last failed attempt, if any.
    public var lastError: String?

    /// Creates an entry (stores build these from their rows).
    public init(id: Int64, message: OutboxMessage, attempts: Int, createdAt: Date, lastError: String?) {
        self.id = id
        self.message = message
        self.attempts = attempts
        self.createdAt = createdAt
        self.lastError = lastError
    }
}
