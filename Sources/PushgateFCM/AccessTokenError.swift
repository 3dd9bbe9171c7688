import Foundation

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
