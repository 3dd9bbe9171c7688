public import Crypto
public import Foundation
import Synchronization

/// One provider token per signing key, key id and team in the process, whichever apps use them: APNs
/// refuses a key's token updated more than once in 20 minutes (`TooManyProviderTokenUpdates`), so apps
/// that share a key (a production and a sandbox app, an app and its VoIP twin) and an app rebuilt by a
/// configuration reload all reuse the same token until it is due.
public final class APNsProviderTokenRegistry: Sendable {
    private struct Key: Hashable {
        var keyID: String
        var teamID: String
        var publicKey: Data
    }

    private let tokens = Mutex<[Key: APNsProviderToken]>([:])
    private let now: @Sendable () -> Date

    /// The process's registry, which `pushgate serve` gives every APNs app.
    public static let shared = APNsProviderTokenRegistry()

    /// Creates an empty registry; tests inject their clock.
    public init(now: @escaping @Sendable () -> Date = Date.init) {
        self.now = now
    }

    /// The token source of `key`, `keyID` and `teamID`: the one made before, or a new one.
    public func token(key: P256.Signing.PrivateKey, keyID: String, teamID: String) -> APNsProviderToken {
        let registered = Key(keyID: keyID, teamID: teamID, publicKey: key.publicKey.x963Representation)
        return self.tokens.withLock { tokens in
            if let existing = tokens[registered] { return existing }
            let made = APNsProviderToken(key: key, keyID: keyID, teamID: teamID, now: self.now)
            tokens[registered] = made
            return made
        }
    }
}
