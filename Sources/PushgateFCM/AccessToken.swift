public import Foundation

/// An OAuth 2.0 access token and when it stops being usable.
public struct AccessToken: Sendable, Equatable {
    /// The bearer token.
    public var value: String
    /// When Google says it expires.
    public var expiresAt: Date

    /// Creates a token.
    public init(value: String, expiresAt: Date) {
        self.value = value
        self.expiresAt = expiresAt
    }
}

/// Why an access token could not be obtained.
public struct AccessTokenError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, without secrets.
    public var message: String
    /// The token endpoint's HTTP status, when it answered.
    public var status: Int?

    /// Creates an error.
    public init(_ message: String, status: Int? = nil) {
        self.message = message
        self.status = status
    }

    public var description: String {
        self.status.map { "\(self.message) (HTTP \($0))" } ?? self.message
    }
}
