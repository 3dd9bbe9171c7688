import Crypto
import CryptoExtras
import Foundation

/// go-ethereum's ECIES with secp256k1 as Waku uses it (`ECIES_AES128_SHA256`, empty S1 and S2): the raw X
/// of the ECDH point, a SHA-256 concatenation KDF to 32 bytes, AES-128-CTR under the first half with the
/// 16-byte IV as the whole initial counter block, and HMAC-SHA-256 under the SHA-256 of the second half
/// over IV ‖ ciphertext. Output: ephemeral public key (65 bytes) ‖ IV ‖ ciphertext ‖ tag — 113 bytes more
/// than the plaintext.
public enum ECIES {
    /// Why a ciphertext cannot be opened.
    public enum Failure: Error, Equatable, Sendable {
        case malformed
        case authenticationFailed
    }

    /// Encrypts `plaintext` to `recipient`.
    /// - Parameters:
    ///   - ephemeralKey: the sender's one-time key (random when nil; fixed only for test vectors).
    ///   - iv: the 16-byte IV (random when nil).
    public static func encrypt(_ plaintext: [UInt8], to recipient: Secp256k1.PublicKey, ephemeralKey: Secp256k1.PrivateKey? = nil, iv: [UInt8]? = nil) throws -> [UInt8] {
        let ephemeral = try ephemeralKey ?? Secp256k1.PrivateKey()
        let (encryptionKey, macKey) = Self.keys(ephemeral.sharedSecretX(with: recipient))
        let iv = iv ?? SecureRandom.bytes(16)
        guard iv.count == 16 else { throw Failure.malformed }
        let ciphertext = Array(try AES._CTR.encrypt(plaintext, using: SymmetricKey(data: encryptionKey), nonce: AES._CTR.Nonce(nonceBytes: iv)))
        let tag = Array(HMAC<SHA256>.authenticationCode(for: iv + ciphertext, using: SymmetricKey(data: macKey)))
        return ephemeral.publicKey.uncompressed + iv + ciphertext + tag
    }

    /// Decrypts what ``encrypt(_:to:ephemeralKey:iv:)`` (or go-ethereum) made for `privateKey`.
    public static func decrypt(_ ciphertext: [UInt8], with privateKey: Secp256k1.PrivateKey) throws -> [UInt8] {
        guard let first = ciphertext.first, first == 4 else { throw Failure.malformed }
        guard ciphertext.count > 65 + 16 + 32 else { throw Failure.malformed }
        guard let ephemeral = try? Secp256k1.PublicKey(bytes: Array(ciphertext[0..<65])) else { throw Failure.malformed }
        let (encryptionKey, macKey) = Self.keys(privateKey.sharedSecretX(with: ephemeral))
        let iv = Array(ciphertext[65..<81])
        let body = Array(ciphertext[81..<(ciphertext.count - 32)])
        let tag = Array(ciphertext[(ciphertext.count - 32)...])
        guard HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: iv + body, using: SymmetricKey(data: macKey)) else {
            throw Failure.authenticationFailed
        }
        return Array(try AES._CTR.decrypt(body, using: SymmetricKey(data: encryptionKey), nonce: AES._CTR.Nonce(nonceBytes: iv)))
    }

    /// The AES-128 key and the MAC key from the shared secret.
    static func keys(_ shared: [UInt8]) -> (encryption: [UInt8], mac: [UInt8]) {
        let derived = Self.concatKDF(shared, count: 32)
        return (Array(derived[0..<16]), Array(SHA256.hash(data: derived[16..<32])))
    }

    /// NIST SP 800-56 concatenation KDF with SHA-256 and no other info: SHA-256(counter ‖ z), the counter a
    /// 4-byte big-endian number from 1, concatenated to `count` bytes.
    public static func concatKDF(_ z: [UInt8], count: Int) -> [UInt8] {
        var output: [UInt8] = []
        var counter: UInt32 = 1
        while output.count < count {
            let prefix: [UInt8] = [UInt8(counter >> 24), UInt8(truncatingIfNeeded: counter >> 16), UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)]
            output += SHA256.hash(data: prefix + z)
            counter += 1
        }
        return Array(output.prefix(count))
    }
}
