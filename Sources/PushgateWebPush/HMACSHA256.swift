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

    /// Prepares the padded key states. The padded key lives in a buffer on the stack, zeroed afterwards.
    init(key: some ContiguousBytes) {
        var inner = SHA256()
        var outer = SHA256()
        key.withUnsafeBytes { keyBytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.blockSize) { padded in
                padded.initialize(repeating: 0)
                if keyBytes.count > Self.blockSize {
                    SHA256.hash(data: keyBytes).withUnsafeBytes { digest in
                        for index in digest.indices { padded[index] = digest[index] }
                    }
                } else {
                    for index in keyBytes.indices { padded[index] = keyBytes[index] }
                }
                for index in padded.indices { padded[index] ^= 0x36 }
                inner.update(bufferPointer: UnsafeRawBufferPointer(padded))
                for index in padded.indices { padded[index] ^= 0x36 ^ 0x5c }
                outer.update(bufferPointer: UnsafeRawBufferPointer(padded))
                padded.update(repeating: 0)
            }
        }
        self.inner = inner
        self.outer = outer
    }

    /// The code of `message`.
    func authenticationCode(_ message: some ContiguousBytes) -> SHA256.Digest {
        var inner = self.inner
        message.withUnsafeBytes { inner.update(bufferPointer: $0) }
        return self.finish(inner)
    }

    /// The code of the concatenation of `parts`.
    func authenticationCode(_ parts: [UInt8]...) -> SHA256.Digest {
        var inner = self.inner
        for part in parts { inner.update(data: part) }
        return self.finish(inner)
    }

    /// The outer hash over the inner one's digest.
    private func finish(_ inner: SHA256) -> SHA256.Digest {
        var outer = self.outer
        inner.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
        return outer.finalize()
    }
}
