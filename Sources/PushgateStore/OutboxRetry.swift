public import Foundation

/// A leased outbox entry its owner releases for another attempt (see ``OutboxStore/reschedule(_:owner:)``).
public struct OutboxRetry: Sendable, Equatable {
    /// The entry's id.
    public var id: Int64
    /// The earliest time of the next attempt.
    public var notBefore: Date
    /// Why this attempt failed, kept as the entry's last error.
    public var error: String
    /// The tokens still to deliver, when the attempt finished some of the entry's tokens (they leave the
    /// entry); nil keeps all of them.
    public var remainingTokens: [String]?

    /// Creates a retry.
    /// - Precondition: `remainingTokens`, when given, is not empty.
    public init(id: Int64, notBefore: Date, error: String, remainingTokens: [String]? = nil) {
        precondition(remainingTokens?.isEmpty != true, "a retry keeps at least one token")
        self.id = id
        self.notBefore = notBefore
        self.error = error
        self.remainingTokens = remainingTokens
    }
}
