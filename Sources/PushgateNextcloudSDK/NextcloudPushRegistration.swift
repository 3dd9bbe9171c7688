public import Foundation

/// What the device keeps after a successful registration: everything needed to verify pushes and to
/// unregister later.
///
/// `Codable`, so an app can store it next to the account. Nothing in it is secret, but
/// ``deviceIdentifierSignature`` is what authorises changes at the proxy, so keep it with the account data.
public struct NextcloudPushRegistration: Sendable, Hashable, Codable {
    /// The user's public key (SubjectPublicKeyInfo PEM, as the server sent it, usually 451 bytes with a
    /// trailing newline). Every push for this account is signed with the matching private key; pass it to
    /// ``NextcloudPushAccount`` to verify them.
    public var userPublicKey: String
    /// The server's identifier for this device: base64 of a SHA-512 digest, 88 characters.
    public var deviceIdentifier: String
    /// The user key's signature of the device identifier, base64, 344 characters for a 2048-bit key.
    public var deviceIdentifierSignature: String
    /// The proxy the device registered at, exactly as sent to the server.
    public var proxyServer: URL

    /// Describes a registration.
    public init(userPublicKey: String, deviceIdentifier: String, deviceIdentifierSignature: String, proxyServer: URL) {
        self.userPublicKey = userPublicKey
        self.deviceIdentifier = deviceIdentifier
        self.deviceIdentifierSignature = deviceIdentifierSignature
        self.proxyServer = proxyServer
    }
}
