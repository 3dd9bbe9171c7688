import BigInt
import CryptoExtras
import Foundation

/// Verifies RSASSA-PKCS1-v1_5 signatures over a SHA-512 digest the caller already has, as the Nextcloud
/// push proxy must for `deviceIdentifierSignature`: the `deviceIdentifier` *is* the SHA-512 digest, and
/// the signature was made over it without hashing again.
///
/// swift-crypto's public RSA API always hashes (or picks the algorithm from the digest's Swift type), so
/// this performs the EMSA-PKCS1-v1_5 check itself: `m = s^e mod n`, compared with
/// `00 01 FF…FF 00 ‖ DigestInfo(SHA-512) ‖ digest`. The inputs are public, so the comparison need not be
/// constant-time.
public enum PrehashedRSASignature {
    /// The DER DigestInfo prefix for SHA-512 (RFC 8017 §9.2, note 1).
    static let sha512DigestInfoPrefix: [UInt8] = [
        0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40,
    ]

    /// Whether `signature` is a valid PKCS#1 v1.5 SHA-512 signature of `digest` by `publicKeyPEM`.
    /// - Parameters:
    ///   - signature: the raw signature (as long as the modulus).
    ///   - digest: the 64-byte SHA-512 digest that was signed.
    ///   - publicKeyPEM: an SPKI `-----BEGIN PUBLIC KEY-----` RSA key of at least 2048 bits.
    /// - Returns: false for any malformed input, never throws.
    public static func isValid(signature: [UInt8], digest: [UInt8], publicKeyPEM: String) -> Bool {
        guard digest.count == 64,
            let key = try? _RSA.Signing.PublicKey(pemRepresentation: publicKeyPEM),
            let primitives = try? key.getKeyPrimitives()
        else { return false }
        let modulusBytes = Array(primitives.modulus.drop { $0 == 0 })
        let length = modulusBytes.count
        guard signature.count == length else { return false }
        let modulus = BigUInt(Data(modulusBytes))
        let exponent = BigUInt(primitives.publicExponent)
        let s = BigUInt(Data(signature))
        guard s < modulus else { return false }
        let m = s.power(exponent, modulus: modulus)
        var encoded = Array(m.serialize())
        guard encoded.count <= length else { return false }
        encoded = Array(repeating: 0, count: length - encoded.count) + encoded
        let suffix = [0x00] + Self.sha512DigestInfoPrefix + digest
        let padding = length - 2 - suffix.count
        guard padding >= 8 else { return false }
        let expected: [UInt8] = [0x00, 0x01] + Array(repeating: 0xff, count: padding) + suffix
        return encoded == expected
    }
}
