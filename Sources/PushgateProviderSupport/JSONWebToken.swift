public import Crypto
public import _CryptoExtras
import Foundation

/// Signs compact JSON Web Tokens with the two algorithms the providers use: ES256 (APNs provider tokens,
/// VAPID) and RS256 (Google service-account assertions).
public enum JSONWebToken {
    /// Signs `claims` with ES256 (ECDSA P-256, SHA-256, raw r‖s signature).
    /// - Parameters:
    ///   - header: extra header fields (`kid`, `typ`); `alg` is set.
    ///   - claims: the payload object.
    ///   - key: the P-256 signing key.
    public static func es256(header: [String: String] = [:], claims: [String: JSONClaim], key: P256.Signing.PrivateKey) throws -> String {
        let signingInput = try Self.signingInput(header: header.merging(["alg": "ES256"]) { _, new in new }, claims: claims)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// Signs `claims` with RS256 (RSASSA-PKCS1-v1_5, SHA-256).
    public static func rs256(header: [String: String] = [:], claims: [String: JSONClaim], key: _RSA.Signing.PrivateKey) throws -> String {
        let signingInput = try Self.signingInput(header: header.merging(["alg": "RS256"]) { _, new in new }, claims: claims)
        let signature = try key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    private static func signingInput(header: [String: String], claims: [String: JSONClaim]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var fullHeader = header
        if fullHeader["typ"] == nil { fullHeader["typ"] = "JWT" }
        return Base64URL.encode(try encoder.encode(fullHeader)) + "." + Base64URL.encode(try encoder.encode(claims))
    }
}

/// A JWT claim value: a string or an integer (JWT times are integers of seconds).
public enum JSONClaim: Sendable, Hashable, Encodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case integer(Int64)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        }
    }
}
