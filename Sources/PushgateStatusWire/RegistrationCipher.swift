import Crypto
import PushgateCore

/// The registration blob (and the allowed-key-list entries): AES-256-GCM under the X-only ECDH secret
/// (``Secp256k1/PrivateKey/sharedSecretX(with:)``), no associated data, laid out nonce (12) ‖ ciphertext ‖
/// tag (16) — Go's `gcm.Seal(nonce, nonce, …)` (gorush-and-status.md §3.5).
public enum RegistrationCipher {
    /// Why a blob cannot be opened.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The key is not 32 bytes.
        case badKey
        /// Shorter than nonce and tag.
        case malformed
        /// The tag does not match: another key, or altered.
        case authenticationFailed

        public var description: String {
            switch self {
            case .badKey: "a registration key must be 32 bytes"
            case .malformed: "not an AES-GCM registration blob"
            case .authenticationFailed: "the registration blob does not open with this key"
            }
        }
    }

    /// Encrypts `plaintext` (a marshalled registration, or an access token) under the 32-byte `key`.
    /// - Parameter nonce: fixed for test vectors; random when nil.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8]? = nil) throws -> [UInt8] {
        guard key.count == 32 else { throw Failure.badKey }
        let gcmNonce = try AES.GCM.Nonce(data: nonce ?? SecureRandomPool.shared.bytes(12))
        let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), nonce: gcmNonce)
        return Array(gcmNonce) + Array(box.ciphertext) + Array(box.tag)
    }

    /// Decrypts a blob made by ``seal(_:key:nonce:)`` or status-go.
    /// - Throws: ``Failure``.
    public static func open(_ sealed: [UInt8], key: [UInt8]) throws(Failure) -> [UInt8] {
        guard key.count == 32 else { throw .badKey }
        guard sealed.count >= 12 + 16 else { throw .malformed }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key)))
        } catch {
            throw .authenticationFailed
        }
    }
}
