import Crypto
import Foundation
import PushgateProviderSupport

/// Checks a request's VAPID authorisation (RFC 8292) as a push service does.
enum VAPIDVerifier {
    struct Failure: Error, Equatable {
        let reason: String
    }

    /// Verifies `Authorization: vapid t=<JWT>, k=<key>` for a request to `origin`.
    /// - Returns: the JWT's `sub`.
    static func verify(authorization: String?, origin: String, now: Date) throws(Failure) -> String {
        guard let authorization, authorization.lowercased().hasPrefix("vapid ") else { throw Failure(reason: "missing vapid authorization") }
        var parameters: [String: String] = [:]
        for part in authorization.dropFirst(6).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { parameters[pair[0]] = pair[1] }
        }
        guard let token = parameters["t"], let keyText = parameters["k"], let keyBytes = Base64URL.decode(keyText),
            let key = try? P256.Signing.PublicKey(x963Representation: keyBytes)
        else { throw Failure(reason: "vapid t= or k= missing or malformed") }
        let parts = token.split(separator: ".").map(String.init)
        guard parts.count == 3, let signatureBytes = Base64URL.decode(parts[2]),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { throw Failure(reason: "the vapid JWT signature does not verify with k") }
        guard let claimsBytes = Base64URL.decode(parts[1]),
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any]
        else { throw Failure(reason: "unreadable JWT claims") }
        guard claims["aud"] as? String == origin else { throw Failure(reason: "aud is not the push service origin") }
        guard let exp = (claims["exp"] as? NSNumber)?.doubleValue, exp > now.timeIntervalSince1970, exp <= now.timeIntervalSince1970 + 86_400 else {
            throw Failure(reason: "exp is past or more than 24 hours ahead")
        }
        guard let sub = claims["sub"] as? String, sub.hasPrefix("mailto:") || sub.hasPrefix("https:") else {
            throw Failure(reason: "sub must be a mailto: or https: contact")
        }
        return sub
    }
}
