/// secp256k1 keys, recoverable ECDSA signatures (go-ethereum's 65-byte `R ‖ S ‖ V`, `V` 0 or 1, RFC 6979
/// nonces so signatures are deterministic) and the X-only ECDH secret Status uses — all by libsecp256k1,
/// which is loaded when first needed.
public enum Secp256k1 {
    /// libsecp256k1 cannot be loaded; the description names the Debian package.
    public struct Unavailable: Error, CustomStringConvertible, Sendable {
        /// What is missing (the library, the ECDH or the recovery module).
        public let missing: String
        public var description: String {
            "libsecp256k1 with its ECDH and recovery modules is needed for Status, and \(missing) cannot be loaded: install Debian's libsecp256k1-1 (apt-get install libsecp256k1-1)"
        }
    }

    /// Why an operation failed (never with key material).
    public enum Failure: Error, Equatable, Sendable {
        case invalidPrivateKey
        case invalidPublicKey
        case invalidSignature
        case invalidHash
    }

    /// Throws ``Unavailable`` when libsecp256k1 cannot be loaded.
    public static func checkAvailable() throws(Unavailable) {
        _ = try Self.library()
    }

    static func library() throws(Unavailable) -> Secp256k1Library {
        switch Secp256k1Library.shared {
        case .success(let library): return library
        case .failure(let reason): throw reason
        }
    }

    /// A private key: 32 bytes, a valid scalar. Its descriptions never show the key.
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The 32 secret bytes.
        public let rawRepresentation: [UInt8]
        /// The matching public key.
        public let publicKey: PublicKey

        /// A key from its 32 bytes. - Throws: when the bytes are not a valid secret or the library is missing.
        public init(bytes: [UInt8]) throws {
            let library = try Secp256k1.library()
            guard bytes.count == 32, library.seckeyVerify(library.context, bytes) == 1 else { throw Failure.invalidPrivateKey }
            var pubkey = [UInt8](repeating: 0, count: 64)
            guard library.pubkeyCreate(library.context, &pubkey, bytes) == 1 else { throw Failure.invalidPrivateKey }
            self.rawRepresentation = bytes
            self.publicKey = PublicKey(internal: pubkey, library: library)
        }

        /// A new random key. - Throws: when the library is missing.
        public init() throws {
            while true {
                let bytes = SecureRandom.bytes(32)
                if let key = try? PrivateKey(bytes: bytes) {
                    self = key
                    return
                }
                try Secp256k1.checkAvailable()
            }
        }

        public var description: String { "Secp256k1.PrivateKey(public key \(self.publicKey))" }
        public var debugDescription: String { self.description }

        /// The raw X coordinate of the ECDH point with `publicKey` (32 bytes, no hashing): what status-go's
        /// `GenerateShared(…, 16, 16)` yields, the registration key and ECIES's shared secret.
        public func sharedSecretX(with publicKey: PublicKey) -> [UInt8] {
            // The key was made with the library, so it is loaded.
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

        /// A recoverable signature of a 32-byte hash: `R ‖ S ‖ V` (65 bytes, `V` 0 or 1).
        public func signRecoverable(hash32: [UInt8]) -> [UInt8] {
            guard hash32.count == 32, let library = try? Secp256k1.library() else { return [] }
            var signature = [UInt8](repeating: 0, count: 65)
            guard library.signRecoverable(library.context, &signature, hash32, self.rawRepresentation, nil, nil) == 1 else { return [] }
            var compact = [UInt8](repeating: 0, count: 64)
            var recid: Int32 = 0
            guard library.serializeCompact(library.context, &compact, &recid, signature) == 1 else { return [] }
            return compact + [UInt8(recid)]
        }
    }

    /// A public key, compared by its compressed form.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        /// The library's 64-byte internal form.
        let internalBytes: [UInt8]
        /// The 33-byte SEC1 compressed form.
        public let compressed: [UInt8]
        /// The 65-byte SEC1 uncompressed form (`04 ‖ X ‖ Y`).
        public let uncompressed: [UInt8]

        init(internal point: [UInt8], library: Secp256k1Library) {
            self.internalBytes = point
            self.compressed = Self.serialize(point, library: library, flags: Secp256k1Library.compressed, count: 33)
            self.uncompressed = Self.serialize(point, library: library, flags: Secp256k1Library.uncompressed, count: 65)
        }

        /// A key from its 33- or 65-byte SEC1 form. - Throws: when it is not a point of the curve.
        public init(bytes: [UInt8]) throws {
            let library = try Secp256k1.library()
            guard bytes.count == 33 || bytes.count == 65 else { throw Failure.invalidPublicKey }
            var point = [UInt8](repeating: 0, count: 64)
            guard library.pubkeyParse(library.context, &point, bytes, bytes.count) == 1 else { throw Failure.invalidPublicKey }
            self.init(internal: point, library: library)
        }

        /// The X coordinate (32 bytes, big-endian).
        public var x: [UInt8] { Array(self.uncompressed[1..<33]) }

        public var description: String { "0x" + StatusHex.encode(self.compressed) }

        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.compressed == rhs.compressed }
        public func hash(into hasher: inout Hasher) { hasher.combine(self.compressed) }

        private static func serialize(_ point: [UInt8], library: Secp256k1Library, flags: UInt32, count: Int) -> [UInt8] {
            var output = [UInt8](repeating: 0, count: count)
            var length = count
            _ = library.pubkeySerialize(library.context, &output, &length, point, flags)
            return Array(output.prefix(length))
        }
    }

    /// The key that made a recoverable signature of `hash32`. `V` must be 0–3 (go-ethereum's rule: 27 and
    /// 28 are refused).
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

/// Lowercase hex.
public enum StatusHex {
    /// `bytes` as lowercase hex digits, without a prefix.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of hex digits (either case, no prefix); nil when `text` is not hex.
    public static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
