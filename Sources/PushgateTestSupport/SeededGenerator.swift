/// A random number generator whose sequence follows from its seed (SplitMix64): tests that draw many
/// values (random shapes, hash-like bytes) give the same draws on every run, so a failure can be replayed.
/// Not for anything secret.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose draws follow from `seed`.
    public init(seed: UInt64) {
        self.state = seed
    }

    /// The next 64 bits of the sequence.
    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = self.state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// `count` bytes of the sequence.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            var word = self.next()
            for _ in 0..<min(8, count - bytes.count) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return bytes
    }
}
