/// Tests eight bytes at once, as one 64-bit word (SWAR: SIMD within a register).
///
/// Each test returns a word whose bytes have their high bit set (``highBits``) where the test holds; the
/// result is nonzero exactly when the test holds for some byte. Bytes after the first that holds may be
/// flagged falsely (a borrow crosses into them), so the tests say *whether*; ``firstFlaggedOffset(_:)``
/// says where the first one is.
public enum SWARBytes {
    /// The high bit of every byte.
    public static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// `byte` in each of the eight bytes of a word.
    @inlinable @inline(__always)
    public static func broadcast(_ byte: UInt8) -> UInt64 {
        0x0101_0101_0101_0101 &* UInt64(byte)
    }

    /// The eight bytes at `offset` from `base`, the first in the least significant byte on every machine
    /// (a no-op on little-endian ones; `word.littleEndian` stores a word back in the same order).
    @inlinable @inline(__always)
    public static func load(_ base: UnsafePointer<UInt8>, at offset: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self))
    }

    /// High bits set where a byte of `word` is below `limit`, for `limit` up to 0x80.
    @inlinable @inline(__always)
    public static func bytes(of word: UInt64, below limit: UInt8) -> UInt64 {
        (word &- Self.broadcast(limit)) & ~word & Self.highBits
    }

    /// High bits set where a byte of `word` equals `byte`.
    @inlinable @inline(__always)
    public static func bytes(of word: UInt64, equalTo byte: UInt8) -> UInt64 {
        Self.bytes(of: word ^ Self.broadcast(byte), below: 1)
    }

    /// High bits set where a byte of `word` is 0x80 or above.
    @inlinable @inline(__always)
    public static func nonASCIIBytes(of word: UInt64) -> UInt64 {
        word & Self.highBits
    }

    /// The offset, 0 to 7, of the first byte (in memory) that a test flagged in a word from
    /// ``load(_:at:)``; `flags` must be nonzero. A false flag needs a borrow out of a byte that truly holds,
    /// and borrows run toward more significant bytes, that is, later ones: the first flag is exact.
    @inlinable @inline(__always)
    public static func firstFlaggedOffset(_ flags: UInt64) -> Int {
        flags.trailingZeroBitCount &>> 3
    }
}
