import Crypto
import Foundation

/// HMAC-SHA-256 (RFC 2104) for the short keys of the Web Push key derivation, on swift-crypto's SHA-256.
///
/// swift-crypto's `HMAC<SHA256>` costs about 30,000 instructions per code for keys and messages of a few
/// dozen bytes (key objects, secure buffers, generic byte conversions); the SHA-256 work itself is four
/// compressions. This keeps the two padded-key states and copies them for each code, so deriving the
/// content key and the nonce from one PRK absorbs the padded key once. Checked against `HMAC<SHA256>`
/// and RFC 4231's vectors in the tests, and end to end by the RFC 8291 vector and the Python decryptions.
struct HMACSHA256 {
    /// SHA-256's block size; keys up to this long are used as they are (longer ones are hashed first).
    static let blockSize = 64

    /// SHA-256 after absorbing `key ⊕ ipad`.
    private let inner: SHA256
    /// SHA-256 after absorbing `key ⊕ opad`.
    private let outer: SHA256

    /// Prepares the padded key states.
    init(key: some ContiguousBytes) {
        var padded = [UInt8](repeating: 0, count: Self.blockSize)
        key.withUnsafeBytes { bytes in
            if bytes.count > Self.blockSize {
                let digest = SHA256.hash(data: bytes)
                digest.withUnsafeBytes { digestBytes in
                    for index in digestBytes.indices { padded[index] = digestBytes[index] }
                }
            } else {
                for index in bytes.indices { padded[index] = bytes[index] }
            }
        }
        var inner = SHA256()
        var outer = SHA256()
        var block = padded.map { $0 ^ 0x36 }
        inner.update(data: block)
        block = padded.map { $0 ^ 0x5c }
        outer.update(data: block)
        self.inner = inner
        self.outer = outer
    }

    /// The code of the concatenation of `parts`.
    func authenticationCode(_ parts: [UInt8]...) -> SHA256.Digest {
        var inner = self.inner
        for part in parts { inner.update(data: part) }
        var outer = self.outer
        inner.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
        return outer.finalize()
    }
}
