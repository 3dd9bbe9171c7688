import Crypto

/// A pair's key in memory: the first 16 bytes of the SHA-256 of its parts (each after its length, so no
/// two pairs share the hashed text), two words instead of a string.
struct MatrixPairDigest: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    /// - Parameter extra: bytes hashed after the three parts (the last, so without a length), when there
    ///   are any; a digest without them is the same as before they existed.
    init(_ first: String, _ second: String, _ third: String, extra: [UInt8] = []) {
        // One buffer on the stack, hashed in one call: each part's length (8 bytes) and then its bytes.
        var parts = (first, second, third)
        let size = parts.0.utf8.count + parts.1.utf8.count + parts.2.utf8.count + 24 + extra.count
        let words = withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer -> (UInt64, UInt64) in
            var offset = 0
            func append(_ part: inout String) {
                buffer.storeBytes(of: UInt64(part.utf8.count).littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
                part.withUTF8 { bytes in
                    guard let base = bytes.baseAddress else { return }
                    (buffer.baseAddress! + offset).copyMemory(from: base, byteCount: bytes.count)
                    offset += bytes.count
                }
            }
            append(&parts.0)
            append(&parts.1)
            append(&parts.2)
            if !extra.isEmpty {
                extra.withUnsafeBytes { (buffer.baseAddress! + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                offset += extra.count
            }
            var hasher = SHA256()
            hasher.update(bufferPointer: UnsafeRawBufferPointer(buffer))
            return hasher.finalize().withUnsafeBytes { digest in
                (digest.loadUnaligned(fromByteOffset: 0, as: UInt64.self), digest.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
        }
        self.high = words.0
        self.low = words.1
    }
}
