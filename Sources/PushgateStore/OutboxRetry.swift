public import Foundation

/// A leased outbox entry its owner releases for another attempt (see ``OutboxStore/reschedule(_:owner:)``).
public struct OutboxRetry: Sendable, Equatable {
    /// The entry's id.
    public var id: Int64
    /// The earliest time of the next attempt.
    public var notBefore: Date
    /// Why this attempt failed, kept as the entry's last error.
    public var error: String

    /// Creates a retry.
    public init(id: Int64, notBefore: Date, error: String) {
        self.id = id
        self.notBefore = notBefore
        self.error = error
    }
}
