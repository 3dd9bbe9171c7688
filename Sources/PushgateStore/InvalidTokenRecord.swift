public import Foundation

/// A provider's verdict that a token no longer reaches a device.
public struct InvalidTokenRecord: Sendable, Equatable {
    /// The configured app that delivered to it.
    public var appID: String
    /// The token the provider refused.
    public var pushToken: String
    /// The provider's reason (`Unregistered`, `UNREGISTERED`, `410`, …).
    public var reason: String
    /// When the provider said so.
    public var recordedAt: Date

    /// Creates a record.
    public init(appID: String, pushToken: String, reason: String, recordedAt: Date) {
        self.appID = appID
        self.pushToken = pushToken
        self.reason = reason
        self.recordedAt = recordedAt
    }
}
