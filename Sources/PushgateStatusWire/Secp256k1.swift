/// secp256k1 keys, recoverable ECDSA signatures (go-ethereum's 65-byte `R ‖ S ‖ V`, `V` 0 or 1, RFC 6979
/// nonces so signatures are deterministic) and the X-only ECDH secret Status uses — all by libsecp256k1,
/// which is loaded with `dlopen` when first needed (the gateway builds and starts without it as long as
/// Status is not configured).
public enum Secp256k1 {
    /// libsecp256k1 cannot be loaded; the description names the Debian package to install.
    public struct Unavailable: Error, CustomStringConvertible, Sendable {
        /// What is missing: the library, its base functions, the ECDH or the recovery module, or a context.
        public let missing: String

        /// The advice, then what is missing.
        public var description: String {
            "libsecp256k1 with its ECDH and recovery modules is needed for Status: install Debian's libsecp256k1-1 (apt-get install libsecp256k1-1); \(self.missing) could not be loaded"
        }
    }

    /// Why an operation failed. Never carries key material.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not 32 bytes, zero, or not below the group order.
        case invalidPrivateKey
        /// Not a 33- or 65-byte SEC1 encoding of a point of the curve.
        case invalidPublicKey
        /// Not 65 bytes, `V` above 3, `R` or `S` out of range, or no key recovers.
        case invalidSignature
        /// The signed hash is not 32 bytes.
        case invalidHash

        public var description: String {
            switch self {
            case .invalidPrivateKey: "not a valid secp256k1 private key"
            case .invalidPublicKey: "not a valid secp256k1 public key"
            case .invalidSignature: "not a valid recoverable secp256k1 signature"
            case .invalidHash: "the signed hash is not 32 bytes"
            }
        }
    }

    /// Whether libsecp256k1 with its ECDH and recovery modules could be loaded, and if not, why — for
    /// callers that check before starting.
    public static var availability: Result<Void, Unavailable> {
        Secp256k1Library.shared.map { _ in () }
    }

    /// Whether libsecp256k1 could be loaded.
    public static var isAvailable: Bool {
        if case .success = Secp256k1Library.shared { return true }
        return false
    }

    /// Throws ``Unavailable`` when libsecp256k1 cannot be loaded.
    public static func checkAvailable() throws(Unavailable) {
        _ = try Self.library()
    }

    /// The loaded library. - Throws: ``Unavailable``.
    static func library() throws(Unavailable) -> Secp256k1Library {
        switch Secp256k1Library.shared {
        case .success(let library): return library
        case .failure(let reason): throw reason
        }
    }

    /// The key that made a recoverable signature of `hash32` (go-ethereum's `SigToPub`). `V` must be 0–3:
    /// 27 and 28 are refused, as go-ethereum does.
    /// - Throws: ``Failure`` for a malformed signature or hash, ``Unavailable`` without the library.
    public static func recover(signature65: [UInt8], hash32: [UInt8]) throws -> PublicKey {
        let library = try Self.library()
        guard hash32.count == 32 else { throw Failure.invalidHash }
        guard signature65.count == 65, signature65[64] <= 3 else { throw Failure.invalidSignature }
        var signature = [UInt8](repeating: 0, count: 65)
        guard library.parseCompact(library.context, &signature, Array(signature65[0..<64]), Int32(signature65[64])) == 1 else {
            throw Failure.invalidSignature
        }
        var point = [UInt8](repeating: 0, count: 64)
        guard library.recover(library.context, &point, signature, hash32) == 1 else { throw Failure.invalidSignature }
        return PublicKey(internal: point, library: library)
    }
}
