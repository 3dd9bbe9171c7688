public import Crypto
public import Foundation
import PushgateProviderSupport
import Synchronization

/// The provider token of token authentication: an ES256 JWT with `kid` = key id, `iss` = team id and
/// `iat` = issue time, reused until it is 50 minutes old (APNs wants a new one between 20 and 60
/// minutes) or ``invalidate(_:)`` is called after an `ExpiredProviderToken`.
///
/// A lock, not an actor: every request asks for the token, and a cached answer should cost no executor hop.
public final class APNsProviderToken: Sendable {
    /// How long a token is reused.
    public static let lifetime: TimeInterval = 50 * 60

    private let key: P256.Signing.PrivateKey
    private let keyID: String
    private let teamID: String
    private let now: @Sendable () -> Date
    private struct State {
        var current: (token: String, issuedAt: Date)?
        var issuedCount = 0
    }

    private let state = Mutex(State())

    /// How many tokens have been signed so far (for tests and metrics).
    public var issuedCount: Int { self.state.withLock { $0.issuedCount } }

    /// Creates the token source.
    /// - Parameters:
    ///   - key: the `.p8` signing key.
    ///   - keyID: the key's id (`kid`).
    ///   - teamID: the developer team id (`iss`).
    ///   - now: the clock; tests inject their own.
    public init(key: P256.Signing.PrivateKey, keyID: String, teamID: String, now: @escaping @Sendable () -> Date = Date.init) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.now = now
    }

    /// The current token, signing a new one when there is none or it is 50 minutes old.
    public func token() throws -> String {
        try self.state.withLock { state in
            let now = self.now()
            if let current = state.current, now.timeIntervalSince(current.issuedAt) < Self.lifetime, now >= current.issuedAt {
                return current.token
            }
            let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
            let token = try JSONWebToken.es256(
                header: ["kid": self.keyID],
                claims: ["iss": .string(self.teamID), "iat": .integer(issuedAt)],
                key: self.key
            )
            state.current = (token, now)
            state.issuedCount += 1
            return token
        }
    }

    /// Drops `token` so the next call signs a new one; a newer token already in use is kept.
    /// - Parameter token: the token APNs refused; nil drops whatever is current.
    public func invalidate(_ token: String? = nil) {
        self.state.withLock { state in
            if token == nil || state.current?.token == token { state.current = nil }
        }
    }
}
