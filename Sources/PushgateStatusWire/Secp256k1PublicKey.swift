import PushgateCore
extension Secp256k1 {
    /// A public key, equal and hashed by its 33-byte compressed form.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        /// The library's 64-byte internal form.
        let internalBytes: [UInt8]
        /// The 33-byte SEC1 compressed form (`02`/`03` ‖ X).
        public let compressed: [UInt8]
        /// The 65-byte SEC1 uncompressed form (`04 ‖ X ‖ Y`).
        public let uncompressed: [UInt8]

        init(internal point: [UInt8], library: Secp256k1Library) {
            self.internalBytes = point
            self.compressed = Self.serialize(point, library: library, flags: Secp256k1Library.compressed, count: 33)
            self.uncompressed = Self.serialize(point, library: library, flags: Secp256k1Library.uncompressed, count: 65)
        }

        /// A key from its 33-byte compressed or 65-byte uncompressed SEC1 form.
        /// - Throws: ``Secp256k1/Failure/invalidPublicKey`` when it is not a point of the curve,
        ///   ``Secp256k1/Unavailable`` when the library is missing.
        public init(bytes: [UInt8]) throws {
            let library = try Secp256k1.library()
            guard (bytes.count == 33 && (bytes[0] == 2 || bytes[0] == 3)) || (bytes.count == 65 && bytes[0] == 4) else {
                throw Failure.invalidPublicKey
            }
            var point = [UInt8](repeating: 0, count: 64)
            guard library.pubkeyParse(library.context, &point, bytes, bytes.count) == 1 else { throw Failure.invalidPublicKey }
            self.init(internal: point, library: library)
        }

        /// The X coordinate (32 bytes, big-endian).
        public var x: [UInt8] { Array(self.uncompressed[1..<33]) }

        /// `0x` and the compressed form in hex.
        public var description: String { "0x" + Hex.lowercase(self.compressed) }

        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.compressed == rhs.compressed }
        public func hash(into hasher: inout Hasher) { hasher.combine(self.compressed) }

        private static func serialize(_ point: [UInt8], library: Secp256k1Library, flags: UInt32, count: Int) -> [UInt8] {
            var output = [UInt8](repeating: 0, count: count)
            var length = count
            _ = library.pubkeySerialize(library.context, &output, &length, point, flags)
            return Array(output.prefix(length))
        }
    }
}
