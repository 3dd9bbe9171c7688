import Foundation
import PushgateProviderSupport
import _CryptoExtras

/// Checks an OAuth 2.0 JWT-bearer assertion the way Google's token endpoint does, against the key the
/// emulator issued.
struct FCMAssertionVerifier: Sendable {
    /// The audience google-auth always signs for, whatever the file's `token_uri`.
    static let googleTokenURL = "https://oauth2.googleapis.com/token"
    /// The scope FCM needs.
    static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Allowed clock difference, in seconds.
    static let leeway: Int64 = 60

    let publicKey: _RSA.Signing.PublicKey
    let clientEmail: String

    /// Why an assertion was refused (the `error_description`).
    struct Refusal: Error, Equatable {
        var description: String
    }

    /// Verifies `assertion`; `audiences` are the token URLs accepted besides Google's.
    func verify(_ assertion: String, audiences: Set<String>, now: Date) throws(Refusal) {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let claimBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2])
        else { throw Refusal(description: "the assertion is not a compact JWT") }
        guard let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any]
        else { throw Refusal(description: "the assertion's header or claims are not JSON objects") }
        guard header["alg"] as? String == "RS256" else { throw Refusal(description: "the assertion must be signed with RS256") }

        let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureBytes)
        let signingInput = Data((parts[0] + "." + parts[1]).utf8)
        guard self.publicKey.isValidSignature(signature, for: signingInput, padding: .insecurePKCS1v1_5) else {
            throw Refusal(description: "Invalid JWT Signature.")
        }
        guard claims["iss"] as? String == self.clientEmail else { throw Refusal(description: "Invalid issuer: the iss claim is not the service account") }
        let scopes = (claims["scope"] as? String ?? "").split(separator: " ").map(String.init)
        guard scopes.contains(Self.messagingScope) else { throw Refusal(description: "Invalid scope: firebase.messaging is required") }
        guard let audience = claims["aud"] as? String, audience == Self.googleTokenURL || audiences.contains(audience) else {
            throw Refusal(description: "Invalid JWT: the aud claim is not this token endpoint")
        }
        guard let iat = Self.integer(claims["iat"]), let exp = Self.integer(claims["exp"]) else {
            throw Refusal(description: "Invalid JWT: iat and exp are required")
        }
        let current = Int64(now.timeIntervalSince1970)
        guard exp > iat, exp - iat <= 3600 else { throw Refusal(description: "Invalid JWT: exp must be at most one hour after iat") }
        guard iat <= current + Self.leeway else { throw Refusal(description: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe") }
        guard exp > current - Self.leeway else { throw Refusal(description: "Invalid JWT: the assertion has expired") }
    }

    private static func integer(_ value: Any?) -> Int64? {
        switch value {
        case let number as NSNumber: number.int64Value
        default: nil
        }
    }
}
