public import Foundation
public import _CryptoExtras

/// A Google service-account key file, as the Firebase console downloads it.
///
/// Only the fields the OAuth 2.0 JWT-bearer grant needs are read; the others are ignored.
public struct ServiceAccount: Sendable, Decodable, Equatable {
    /// `service_account` for these files.
    public var type: String?
    /// The Google Cloud project the account belongs to.
    public var projectID: String?
    /// The id of the signing key, sent as the assertion's `kid`.
    public var privateKeyID: String
    /// The RSA private key, PEM (PKCS#8 or PKCS#1).
    public var privateKey: String
    /// The account's e-mail address, the assertion's `iss`.
    public var clientEmail: String
    /// Where assertions are exchanged for access tokens.
    public var tokenURI: String

    enum CodingKeys: String, CodingKey {
        case type
        case projectID = "project_id"
        case privateKeyID = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    /// Creates an account from its parts.
    public init(type: String? = "service_account", projectID: String?, privateKeyID: String, privateKey: String, clientEmail: String, tokenURI: String) {
        self.type = type
        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
    }

    /// Decodes a service-account JSON document.
    /// - Throws: `DecodingError` when a required field is missing or of the wrong type.
    public init(json: Data) throws {
        self = try JSONDecoder().decode(ServiceAccount.self, from: json)
    }

    /// The RSA signing key parsed from ``privateKey``.
    /// - Throws: when the PEM is not an RSA private key (or is shorter than 2048 bits).
    public func signingKey() throws -> _RSA.Signing.PrivateKey {
        try _RSA.Signing.PrivateKey(pemRepresentation: self.privateKey)
    }
}
