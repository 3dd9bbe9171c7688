/// Why a key could not be generated, imported or used.
///
/// The cases carry no key material, so an error can be logged safely.
public enum NextcloudKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Generating a new RSA key pair failed in the crypto library.
    case generationFailed
    /// The data is not an RSA private key in PEM (PKCS#1 or PKCS#8) or DER (PKCS#1 or PKCS#8) form.
    case invalidPrivateKey
    /// The text is not an RSA public key in PEM form.
    case invalidPublicKey
    /// The key is an RSA key, but not one whose public key the Nextcloud server accepts: only 2048-bit keys
    /// with a small public exponent (such as the usual 65537) give the 450- or 451-byte PEM it requires.
    case unsupportedKey(bits: Int)

    /// A short explanation, without key material.
    public var description: String {
        switch self {
        case .generationFailed: "RSA key generation failed"
        case .invalidPrivateKey: "not an RSA private key in PEM or DER form"
        case .invalidPublicKey: "not an RSA public key in PEM form"
        case .unsupportedKey(let bits): "an RSA key of \(bits) bits whose public key does not fit Nextcloud's 450/451-byte PEM rule"
        }
    }
}
