import Foundation

/// What the FCM emulator remembers between requests.
struct FCMEmulatorState {
    /// Access tokens it issued, with their expiry.
    var accessTokens: [String: Date] = [:]
    /// Token URLs written into the service-account files it handed out.
    var tokenURIs: Set<String> = []
    /// `POST /token` requests seen, accepted or not.
    var tokenRequests = 0
    /// Access tokens issued.
    var tokensIssued = 0
    /// `messages:send` requests seen.
    var sendRequests = 0
    /// Whether every access token is refused.
    var refusesAllAccessTokens = false
    /// The last message id.
    var messageSerial = 0
}
