import Crypto
import CryptoExtras
import PushgateCore

/// go-ethereum's ECIES with secp256k1 as Waku uses it (`ECIES_AES128_SHA256`, S1 and S2 empty,
/// status-wire.md §2.5): `z` = the raw X of the ECDH point; K = the SHA-256 concatenation KDF of `z` to
/// 32 bytes; AES-128-CTR under K[0..<16] with the 16-byte IV as the whole initial counter block (a 128-bit
/// big-endian counter); HMAC-SHA-256 under SHA-256(K[16..<32]) over IV ‖ ciphertext. Output: the
/// ephemeral public key (65 bytes, uncompressed) ‖ IV ‖ ciphertext ‖ tag — ``overhead`` bytes more than
/// the plaintext.
public enum ECIES {
    /// Why a ciphertext cannot be opened (or an IV is unusable).
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Empty, too short, not starting with an uncompressed point of the curve, or a bad IV length.
        case malformed
        /// The tag does not match: not for this key, or altered.
        case authenticationFailed

        public var description: String {
            switch self {
            case .malformed: "not an ECIES ciphertext"
            case .authenticationFailed: "the ECIES tag does not match"
            }
        }
    }

    /// Bytes added to the plaintext: 65 (ephemeral key) + 16 (IV) + 32 (tag).
    public static let overhead = 65 + 16 + 32

    /// Encrypts `plaintext` to `recipient`.
    /// - Parameters:
    ///   - ephemeralKey: the sender's one-time key (random when nil; fixed only for test vectors).
    ///   - iv: the 16-byte IV (random when nil; fixed only for test vectors).
    /// - Throws: ``Failure/malformed`` for an IV that is not 16 bytes, ``Secp256k1/Unavailable`` without
    ///   libsecp256k1.
    public static func encrypt(_ plaintext: [UInt8], to recipient: Secp256k1.PublicKey, ephemeralKey: Secp256k1.PrivateKey? = nil, iv: [UInt8]? = nil) throws -> [UInt8] {
        let ephemeral = try ephemeralKey ?? Secp256k1.PrivateKey()
        let iv = iv ?? SecureRandomPool.shared.bytes(16)
        guard iv.count == 16 else { throw Failure.malformed }
        let keys = Self.keys(ephemeral.sharedSecretX(with: recipient))
        let ciphertext = try AES._CTR.encrypt(plaintext, using: keys.encryption, nonce: AES._CTR.Nonce(nonceBytes: iv))
        var output = ephemeral.publicKey.uncompressed
        output.reserveCapacity(plaintext.count + Self.overhead)
        output += iv
        output += ciphertext
        output += HMAC<SHA256>.authenticationCode(for: output[65...], using: keys.mac)
        return output
    }

    /// Decrypts what ``encrypt(_:to:ephemeralKey:iv:)`` (or go-ethereum) made for `privateKey`.
    ///
    /// Rejects, as go-ethereum does: empty input; a first byte other than 2, 3 or 4; fewer than
    /// 65 + 32 + 1 bytes; anything but a valid uncompressed point in the first 65 bytes; a tag mismatch
    /// (compared in constant time); and, after the tag, a body shorter than the IV.
    public static func decrypt(_ ciphertext: [UInt8], with privateKey: Secp256k1.PrivateKey) throws -> [UInt8] {
        guard let first = ciphertext.first, (2...4).contains(first) else { throw Failure.malformed }
        guard ciphertext.count >= 65 + 32 + 1, first == 4 else { throw Failure.malformed }
        guard let ephemeral = try? Secp256k1.PublicKey(bytes: Array(ciphertext[0..<65])) else { throw Failure.malformed }
        let keys = Self.keys(privateKey.sharedSecretX(with: ephemeral))
        let tagStart = ciphertext.count - 32
        let body = ciphertext[65..<tagStart]
        guard HMAC<SHA256>.isValidAuthenticationCode(ciphertext[tagStart...], authenticating: body, using: keys.mac) else {
            throw Failure.authenticationFailed
        }
        guard body.count >= 16 else { throw Failure.malformed }
        let iv = body.prefix(16)
        return Array(try AES._CTR.decrypt(body.dropFirst(16), using: keys.encryption, nonce: AES._CTR.Nonce(nonceBytes: iv)))
    }

    /// The AES-128 key (K[0..<16]) and the MAC key (SHA-256 of K[16..<32]) from the shared secret.
    static func keys(_ shared: [UInt8]) -> (encryption: SymmetricKey, mac: SymmetricKey) {
        let derived = Self.concatKDF(shared, count: 32)
        return (SymmetricKey(data: derived[0..<16]), SymmetricKey(data: SHA256.hash(data: derived[16..<32])))
    }

    /// NIST SP 800-56 concatenation KDF with SHA-256 and no other info (S1 empty): SHA-256(counter ‖ z)
    /// with a 4-byte big-endian counter from 1, concatenated and cut to `count` bytes.
    public static func concatKDF(_ z: [UInt8], count: Int) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(count + 32)
        var counter: UInt32 = 1
        while output.count < count {
            var hasher = SHA256()
            hasher.update(data: [UInt8(counter >> 24), UInt8(truncatingIfNeeded: counter >> 16), UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)])
            hasher.update(data: z)
            output += hasher.finalize()
            counter += 1
        }
        return Array(output.prefix(count))
    }
}
