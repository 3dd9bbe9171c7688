import Crypto
import CryptoExtras

/// One account the device receives Nextcloud pushes for: the user public key that signs them and the
/// device key that decrypts them.
public struct NextcloudPushAccount: Sendable {
    /// The app's own name for the account (for example `alice@cloud.example.com`), reported back in
    /// ``NextcloudDecodedPush/account``.
    public let identifier: String
    /// The user public key, PEM, as the server sent it at registration.
    public let userPublicKeyPEM: String
    /// The device key pair registered for this account.
    public let deviceKey: NextcloudDeviceKey
    /// ``userPublicKeyPEM``, parsed.
    let userPublicKey: _RSA.Signing.PublicKey

    /// Describes an account.
    /// - Parameters:
    ///   - identifier: the app's own name for the account.
    ///   - userPublicKeyPEM: ``NextcloudPushRegistration/userPublicKey``.
    ///   - deviceKey: the device key registered for this account.
    /// - Throws: ``NextcloudKeyError/invalidPublicKey`` if `userPublicKeyPEM` is not an RSA public key of
    ///   at least 2048 bits.
    public init(identifier: String, userPublicKeyPEM: String, deviceKey: NextcloudDeviceKey) throws(NextcloudKeyError) {
        guard let key = try? _RSA.Signing.PublicKey(pemRepresentation: userPublicKeyPEM) else {
            throw .invalidPublicKey
        }
        self.identifier = identifier
        self.userPublicKeyPEM = userPublicKeyPEM
        self.deviceKey = deviceKey
        self.userPublicKey = key
    }

    /// Describes an account from its registration.
    /// - Throws: ``NextcloudKeyError/invalidPublicKey`` if the registration's user public key is not an
    ///   RSA public key of at least 2048 bits.
    public init(identifier: String, registration: NextcloudPushRegistration, deviceKey: NextcloudDeviceKey) throws(NextcloudKeyError) {
        try self.init(identifier: identifier, userPublicKeyPEM: registration.userPublicKey, deviceKey: deviceKey)
    }

    /// Whether this account's user key made `signature`: RSASSA-PKCS1-v1_5 with SHA-512 over `ciphertext`.
    func signed(_ ciphertext: [UInt8], signature: [UInt8]) -> Bool {
        self.userPublicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA512.hash(data: ciphertext), padding: .insecurePKCS1v1_5
        )
    }

    /// Whether `pem` is a public key ``init(identifier:userPublicKeyPEM:deviceKey:)`` accepts.
    static func isUserPublicKey(_ pem: String) -> Bool {
        (try? _RSA.Signing.PublicKey(pemRepresentation: pem)) != nil
    }
}
