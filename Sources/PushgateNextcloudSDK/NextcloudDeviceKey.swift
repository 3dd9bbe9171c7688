import Crypto
import CryptoExtras
public import Foundation

/// The device's RSA 2048 key pair for one Nextcloud push registration.
///
/// The device generates it once, keeps the private key (for example in the keychain, using
/// ``pemRepresentation`` or ``derRepresentation``), and sends the public key to the Nextcloud server as
/// ``publicKeyPEM(trailingNewline:)``. The server encrypts every push subject with that public key; only this
/// private key can decrypt it (see ``NextcloudPushDecoder``).
///
/// The Nextcloud server accepts a device public key only as a SubjectPublicKeyInfo PEM with 64-column
/// lines that is exactly 450 bytes long (no trailing newline) or 451 bytes long (with one), with
/// `"\n-----END PUBLIC KEY-----"` at byte offset 425. That admits only 2048-bit RSA keys (with public
/// exponent 65537, as this type generates, or another small one such as 3); this type imports no other
/// kind.
public struct NextcloudDeviceKey: Sendable {
    /// The key itself. The signing flavour is kept because it is `Sendable`; decryption re-reads it as an
    /// encryption key (``decrypt(_:)``).
    private let privateKey: _RSA.Signing.PrivateKey

    /// Generates a new RSA 2048 key pair with public exponent 65537.
    /// - Throws: ``NextcloudKeyError/generationFailed`` if the crypto library fails.
    public init() throws(NextcloudKeyError) {
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        } catch {
            throw .generationFailed
        }
        try self.init(validating: key)
    }

    /// Imports a private key exported with ``pemRepresentation``, or any RSA 2048 private key in PEM form,
    /// PKCS#8 or PKCS#1 (the PEM header names which).
    /// - Throws: ``NextcloudKeyError/invalidPrivateKey`` if the text is not such a key,
    ///   ``NextcloudKeyError/unsupportedKey(bits:)`` if it is an RSA key whose public PEM the server would
    ///   refuse (another size, or a large public exponent).
    public init(pemRepresentation: String) throws(NextcloudKeyError) {
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(unsafePEMRepresentation: pemRepresentation)
        } catch {
            throw .invalidPrivateKey
        }
        try self.init(validating: key)
    }

    /// Imports a private key exported with ``derRepresentation``, or any RSA 2048 private key in DER form,
    /// PKCS#8 or PKCS#1.
    /// - Throws: ``NextcloudKeyError/invalidPrivateKey`` if the bytes are not such a key,
    ///   ``NextcloudKeyError/unsupportedKey(bits:)`` if it is an RSA key whose public PEM the server would
    ///   refuse (another size, or a large public exponent).
    public init(derRepresentation: Data) throws(NextcloudKeyError) {
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(unsafeDERRepresentation: derRepresentation)
        } catch {
            throw .invalidPrivateKey
        }
        try self.init(validating: key)
    }

    private init(validating key: _RSA.Signing.PrivateKey) throws(NextcloudKeyError) {
        guard key.keySizeInBits == 2048,
              Self.publicKeyPEM(spki: key.publicKey.derRepresentation, trailingNewline: true).utf8.count == 451
        else {
            throw .unsupportedKey(bits: key.keySizeInBits)
        }
        self.privateKey = key
    }

    /// The private key as PKCS#8 PEM, for storage. Treat it as a secret.
    public var pemRepresentation: String { self.privateKey.pkcs8PEMRepresentation }

    /// The private key as PKCS#8 DER, for storage. Treat it as a secret.
    public var derRepresentation: Data { self.privateKey.pkcs8DERRepresentation }

    /// The public key as DER-encoded SubjectPublicKeyInfo.
    public var publicKeyDER: Data { self.privateKey.publicKey.derRepresentation }

    /// The public key in the PEM form the Nextcloud server requires: SubjectPublicKeyInfo,
    /// `-----BEGIN PUBLIC KEY-----`, base64 in 64-column lines separated by `"\n"`.
    ///
    /// - Parameter trailingNewline: `true` (the default, as the server's own keys and Nextcloud Files for
    ///   Android) ends the text with `"\n"`, 451 bytes; `false` (as Nextcloud Talk for Android) leaves it
    ///   off, 450 bytes. The server accepts both.
    /// - Returns: the PEM text, with `"\n-----END PUBLIC KEY-----"` at byte offset 425.
    public func publicKeyPEM(trailingNewline: Bool = true) -> String {
        Self.publicKeyPEM(spki: self.publicKeyDER, trailingNewline: trailingNewline)
    }

    /// Decrypts a push subject: RSA-OAEP with SHA-1 and MGF1-SHA-1 first (Nextcloud 35 and later),
    /// then PKCS#1 v1.5 (Nextcloud 34 and earlier, or `push_encryption_padding` set to `PKCS1`).
    /// - Returns: the plaintext, or `nil` when neither padding decrypts it.
    func decrypt(_ ciphertext: Data) -> Data? {
        guard let key = try? _RSA.Encryption.PrivateKey(unsafeDERRepresentation: self.privateKey.derRepresentation) else {
            return nil
        }
        if let plaintext = try? key.decrypt(ciphertext, padding: .PKCS1_OAEP) {
            return plaintext
        }
        return try? key.decrypt(ciphertext, padding: ._WEAK_AND_INSECURE_PKCS_V1_5)
    }

    private static func publicKeyPEM(spki: Data, trailingNewline: Bool) -> String {
        let base64 = Array(spki.base64EncodedString().utf8)
        var lines: [String] = []
        var start = 0
        while start < base64.count {
            let end = min(start + 64, base64.count)
            lines.append(String(decoding: base64[start..<end], as: UTF8.self))
            start = end
        }
        let pem = "-----BEGIN PUBLIC KEY-----\n" + lines.joined(separator: "\n") + "\n-----END PUBLIC KEY-----"
        return trailingNewline ? pem + "\n" : pem
    }
}

extension NextcloudDeviceKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Names the key without revealing it.
    public var description: String { "NextcloudDeviceKey(RSA 2048)" }
    /// Names the key without revealing it.
    public var debugDescription: String { self.description }
    /// Hides the key from `dump` and debuggers' reflection.
    public var customMirror: Mirror { Mirror(self, children: []) }
}
