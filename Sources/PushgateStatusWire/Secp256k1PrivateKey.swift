import PushgateCore

extension Secp256k1 {
    /// A private key: 32 bytes, a valid scalar (non-zero, below the group order). Its descriptions show
    /// only the public key, never the secret.
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The 32 secret bytes, big-endian.
        public let rawRepresentation: [UInt8]
        /// The matching public key.
        public let publicKey: PublicKey

        /// A key from its 32 bytes.
        /// - Throws: ``Secp256k1/Failure/invalidPrivateKey`` when the bytes are not a valid secret,
        ///   ``Secp256k1/Unavailable`` when the library is missing.
        public init(bytes: [UInt8]) throws {
            let library = try Secp256k1.library()
            guard bytes.count == 32, library.seckeyVerify(library.context, bytes) == 1 else { throw Failure.invalidPrivateKey }
            var point = [UInt8](repeating: 0, count: 64)
            guard library.pubkeyCreate(library.context, &point, bytes) == 1 else { throw Failure.invalidPrivateKey }
            self.rawRepresentation = bytes
            self.publicKey = PublicKey(internal: point, library: library)
        }

        /// A new random key (random 32 bytes until they are a valid secret).
        /// - Throws: ``Secp256k1/Unavailable`` when the library is missing.
        public init() throws {
            try Secp256k1.checkAvailable()
            while true {
                if let key = try? PrivateKey(bytes: SecureRandomPool.shared.bytes(32)) {
                    self = key
                    return
                }
            }
        }

        public var description: String { "Secp256k1.PrivateKey(public key \(self.publicKey))" }
        public var debugDescription: String { self.description }

        /// The raw X coordinate of the ECDH point with `publicKey`: 32 bytes, big-endian, NOT hashed — what
        /// go-ethereum's `GenerateShared(…, 16, 16)` yields, so ECIES's `z`, the registration key and the
        /// allowed-key-list key. (libsecp256k1's default hashes the point with SHA-256; a hash function that
        /// copies X is passed instead.) Empty only if the library refuses the point, which a parsed key
        /// never is.
        public func sharedSecretX(with publicKey: PublicKey) -> [UInt8] {
            // A key exists only when the library is loaded.
            guard let library = try? Secp256k1.library() else { return [] }
            var output = [UInt8](repeating: 0, count: 32)
            let copyX: Secp256k1Library.ECDHHash = { output, x, _, _ in
                guard let output, let x else { return 0 }
                output.update(from: x, count: 32)
                return 1
            }
            let result = library.ecdh(library.context, &output, publicKey.internalBytes, self.rawRepresentation, copyX, nil)
            return result == 1 ? output : []
        }

        /// A recoverable signature of a 32-byte hash, go-ethereum's `crypto.Sign`: `R ‖ S ‖ V`, 65 bytes, `V`
        /// 0 or 1, with the RFC 6979 nonce (deterministic). Empty when `hash32` is not 32 bytes.
        public func signRecoverable(hash32: [UInt8]) -> [UInt8] {
            guard hash32.count == 32, let library = try? Secp256k1.library() else { return [] }
            var signature = [UInt8](repeating: 0, count: 65)
            guard library.signRecoverable(library.context, &signature, hash32, self.rawRepresentation, nil, nil) == 1 else { return [] }
            var compact = [UInt8](repeating: 0, count: 64)
            var recoveryID: Int32 = 0
            guard library.serializeCompact(library.context, &compact, &recoveryID, signature) == 1 else { return [] }
            return compact + [UInt8(truncatingIfNeeded: recoveryID)]
        }
    }
}
