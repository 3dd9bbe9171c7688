public import Crypto
public import Foundation
import PushgateProviderSupport

/// Checks APNs provider tokens the way APNs does: an ES256 JWT signed by the issued key, with the
/// issued key id (`kid`), team id (`iss`) and an issue time (`iat`) at most an hour old.
public struct APNsProviderTokenVerifier: Sendable {
    /// The public half of the issued `.p8` key.
    public var publicKey: P256.Signing.PublicKey
    /// The issued key id.
    public var keyID: String
    /// The issued team id.
    public var teamID: String
    /// How old a token may be.
    public var maximumAge: TimeInterval = 3600

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
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return "InvalidProviderToken" }
        let segments = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let headerBytes = Base64URL.decode(String(segments[0])),
            let claimsBytes = Base64URL.decode(String(segments[1])),
            let signatureBytes = Base64URL.decode(String(segments[2])),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any]
        else { return "InvalidProviderToken" }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == self.keyID,
            claims["iss"] as? String == self.teamID,
            let issuedAt = (claims["iat"] as? NSNumber)?.doubleValue
        else { return "InvalidProviderToken" }
        let signingInput = Data("\(segments[0]).\(segments[1])".utf8)
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            self.publicKey.isValidSignature(signature, for: signingInput)
        else { return "InvalidProviderToken" }
        let age = now.timeIntervalSince1970 - issuedAt
        if age > self.maximumAge { return "ExpiredProviderToken" }
        if age < -60 { return "InvalidProviderToken" }
        return nil
    }
}
