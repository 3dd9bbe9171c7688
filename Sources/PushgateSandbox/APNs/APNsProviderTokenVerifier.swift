public import Crypto
public import Foundation
import PushgateProviderSupport
import Synchronization

/// Checks APNs provider tokens the way APNs does: an ES256 JWT signed by the issued key, with the
/// issued key id (`kid`), team id (`iss`) and an issue time (`iat`) at most an hour old.
///
/// Like APNs, which sees the same provider token for up to an hour, it remembers what it found for each
/// token it checked (keyed by the exact `authorization` text): the signature and the header and claims are
/// checked once per token, the token's age on every request.
public struct APNsProviderTokenVerifier: Sendable {
    /// The public half of the issued `.p8` key.
    public var publicKey: P256.Signing.PublicKey {
        didSet { self.verified = VerifiedTokens() }
    }
    /// The issued key id.
    public var keyID: String {
        didSet { self.verified = VerifiedTokens() }
    }
    /// The issued team id.
    public var teamID: String {
        didSet { self.verified = VerifiedTokens() }
    }
    /// How old a token may be.
    public var maximumAge: TimeInterval = 3600

    /// What earlier checks found, for this key, key id and team id.
    private var verified = VerifiedTokens()

    /// Creates a verifier.
    public init(publicKey: P256.Signing.PublicKey, keyID: String, teamID: String) {
        self.publicKey = publicKey
        self.keyID = keyID
        self.teamID = teamID
    }

    /// The APNs reason for refusing `authorization`, or nil when the token is good.
    /// - Parameters:
    ///   - authorization: the `authorization` header (`bearer <jwt>`), if any.
    ///   - now: the current time.
    /// - Returns: `MissingProviderToken`, `InvalidProviderToken`, `ExpiredProviderToken` or nil.
    public func problem(with authorization: String?, now: Date = Date()) -> String? {
        guard let authorization, !authorization.isEmpty else { return "MissingProviderToken" }
        let issuedAt: Double
        switch self.verified.lookUp(authorization) {
        case .valid(let time)?:
            issuedAt = time
        case .invalid?:
            return "InvalidProviderToken"
        case nil:
            let verdict = self.verify(authorization)
            self.verified.remember(verdict, for: authorization)
            guard case .valid(let time) = verdict else { return "InvalidProviderToken" }
            issuedAt = time
        }
        let age = now.timeIntervalSince1970 - issuedAt
        if age > self.maximumAge { return "ExpiredProviderToken" }
        if age < -60 { return "InvalidProviderToken" }
        return nil
    }

    /// Everything about a token that does not depend on the time: its form, header, claims and signature.
    private func verify(_ authorization: String) -> VerifiedTokens.Verdict {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .invalid }
        let segments = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let headerBytes = Base64URL.decode(String(segments[0])),
            let claimsBytes = Base64URL.decode(String(segments[1])),
            let signatureBytes = Base64URL.decode(String(segments[2])),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any]
        else { return .invalid }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == self.keyID,
            claims["iss"] as? String == self.teamID,
            let issuedAt = (claims["iat"] as? NSNumber)?.doubleValue
        else { return .invalid }
        let signingInput = Data("\(segments[0]).\(segments[1])".utf8)
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            self.publicKey.isValidSignature(signature, for: signingInput)
        else { return .invalid }
        return .valid(issuedAt: issuedAt)
    }
}

/// The provider tokens a verifier has checked, by exact `authorization` text; at most
/// ``capacity`` are kept (all are forgotten when it fills, as old tokens are not sent again).
private final class VerifiedTokens: Sendable {
    enum Verdict: Sendable {
        /// Well formed, for the issued key id and team id, and signed by the issued key.
        case valid(issuedAt: Double)
        /// Anything else: `InvalidProviderToken` whatever the time.
        case invalid
    }

    static let capacity = 256
    private let verdicts = Mutex<[String: Verdict]>([:])

    func lookUp(_ authorization: String) -> Verdict? {
        self.verdicts.withLock { $0[authorization] }
    }

    func remember(_ verdict: Verdict, for authorization: String) {
        self.verdicts.withLock { verdicts in
            if verdicts.count >= Self.capacity { verdicts.removeAll(keepingCapacity: true) }
            verdicts[authorization] = verdict
        }
    }
}
