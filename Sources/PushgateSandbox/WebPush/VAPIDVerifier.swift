import Crypto
import Foundation
import PushgateProviderSupport
import Synchronization

/// Checks a request's VAPID authorisation (RFC 8292) as a push service does.
///
/// A sender reuses one `Authorization` header per push service for hours, so what does not depend on
/// the request (the header's form, the key, the signature, the claims) is worked out once per exact header
/// text and remembered; the audience, expiry and contact are checked on every request.
enum VAPIDVerifier {
    struct Failure: Error, Equatable {
        let reason: String
    }

    /// What a header's signed token says, once its signature verified.
    private struct Claims: Sendable {
        var audience: String?
        var expiry: Double?
        var subject: String?
    }

    /// Verdicts by exact header text; forgotten all at once when ``capacity`` are kept.
    private static let verified = Mutex<[String: Result<Claims, Failure>]>([:])
    private static let capacity = 256

    /// Verifies `Authorization: vapid t=<JWT>, k=<key>` for a request to `origin`.
    /// - Returns: the JWT's `sub`.
    static func verify(authorization: String?, origin: String, now: Date) throws(Failure) -> String {
        guard let authorization, authorization.lowercased().hasPrefix("vapid ") else { throw Failure(reason: "missing vapid authorization") }
        let verdict: Result<Claims, Failure>
        if let known = Self.verified.withLock({ $0[authorization] }) {
            verdict = known
        } else {
            verdict = Self.verifySignature(authorization)
            Self.verified.withLock { verified in
                if verified.count >= Self.capacity { verified.removeAll(keepingCapacity: true) }
                verified[authorization] = verdict
            }
        }
        let claims = try verdict.get()
        guard claims.audience == origin else { throw Failure(reason: "aud is not the push service origin") }
        guard let exp = claims.expiry, exp > now.timeIntervalSince1970, exp <= now.timeIntervalSince1970 + 86_400 else {
            throw Failure(reason: "exp is past or more than 24 hours ahead")
        }
        guard let sub = claims.subject, sub.hasPrefix("mailto:") || sub.hasPrefix("https:") else {
            throw Failure(reason: "sub must be a mailto: or https: contact")
        }
        return sub
    }

    /// The checks that do not depend on the request: `t=` and `k=` present, the JWT signed by `k`, its
    /// claims a JSON object.
    private static func verifySignature(_ authorization: String) -> Result<Claims, Failure> {
        var parameters: [String: String] = [:]
        for part in authorization.dropFirst(6).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { parameters[pair[0]] = pair[1] }
        }
        guard let token = parameters["t"], let keyText = parameters["k"], let keyBytes = Base64URL.decode(keyText),
            let key = try? P256.Signing.PublicKey(x963Representation: keyBytes)
        else { return .failure(Failure(reason: "vapid t= or k= missing or malformed")) }
        let parts = token.split(separator: ".").map(String.init)
        guard parts.count == 3, let signatureBytes = Base64URL.decode(parts[2]),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return .failure(Failure(reason: "the vapid JWT signature does not verify with k")) }
        guard let claimsBytes = Base64URL.decode(parts[1]),
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any]
        else { return .failure(Failure(reason: "unreadable JWT claims")) }
        return .success(Claims(audience: claims["aud"] as? String, expiry: (claims["exp"] as? NSNumber)?.doubleValue, subject: claims["sub"] as? String))
    }
}
