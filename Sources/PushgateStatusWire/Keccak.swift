/// The Keccak-f[1600] permutation with a sponge, and the two functions Status uses on it: Ethereum's
/// Keccak-256 (the original padding, domain byte 0x01 — not NIST SHA3-256) and FIPS 202's SHAKE-256
/// (domain byte 0x1F), both with a rate of 136 bytes.
///
/// The state lives in stack-allocated scratch space for the whole call; nothing is allocated per byte or
/// per block, only the output array.
public enum Keccak {
    /// Keccak-256 of `bytes` (32 bytes), as Ethereum and status-go compute it.
    public static func keccak256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { Self.sponge($0, domain: 0x01, outputCount: 32) }
    }

    /// Keccak-256 of any byte collection (slices, `Data`, …).
    public static func keccak256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        Self.withContiguousBytes(bytes) { Self.sponge($0, domain: 0x01, outputCount: 32) }
    }

    /// SHAKE-256 of `bytes`, `outputCount` bytes long (status-go uses 64).
    public static func shake256(_ bytes: [UInt8], outputCount: Int = 64) -> [UInt8] {
        bytes.withUnsafeBufferPointer { Self.sponge($0, domain: 0x1F, outputCount: outputCount) }
    }

    /// SHAKE-256 of any byte collection, `outputCount` bytes long.
    public static func shake256(_ bytes: some Collection<UInt8>, outputCount: Int = 64) -> [UInt8] {
        Self.withContiguousBytes(bytes) { Self.sponge($0, domain: 0x1F, outputCount: outputCount) }
    }

    /// The rate of both functions in bytes (1600 − 2 × 256 bits).
    static let rate = 136
    private static let rateLanes = 17

    private static func withContiguousBytes<Result>(_ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = bytes.withContiguousStorageIfAvailable(body) { return result }
        return Array(bytes).withUnsafeBufferPointer(body)
    }

    /// Absorbs `input` with the multi-rate padding (`domain` … `0x80`) and squeezes `outputCount` bytes.
    private static func sponge(_ input: UnsafeBufferPointer<UInt8>, domain: UInt8, outputCount: Int) -> [UInt8] {
        precondition(outputCount >= 0, "a negative output length")
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 50) { scratch in
            scratch.initialize(repeating: 0)
            let state = UnsafeMutableBufferPointer(rebasing: scratch[0..<25])
            let work = UnsafeMutableBufferPointer(rebasing: scratch[25..<50])

            // Whole blocks.
            var offset = 0
            while input.count - offset >= Self.rate {
                for lane in 0..<Self.rateLanes {
                    state[lane] ^= Self.loadLittleEndian(input, at: offset + lane * 8)
                }
                Self.permute(state, work: work)
                offset += Self.rate
            }
            // The last, partial block (possibly empty) and the padding.
            let remaining = input.count - offset
            for index in 0..<remaining {
                state[index >> 3] ^= UInt64(input[offset + index]) &<< (8 * (index & 7))
            }
            state[remaining >> 3] ^= UInt64(domain) &<< (8 * (remaining & 7))
            state[Self.rateLanes - 1] ^= 0x80 &<< 56
            Self.permute(state, work: work)

            // Squeeze.
            return [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
                var produced = 0
                while produced < outputCount {
                    let chunk = min(Self.rate, outputCount - produced)
                    for index in 0..<chunk {
                        output[produced + index] = UInt8(truncatingIfNeeded: state[index >> 3] &>> (8 * (index & 7)))
                    }
                    produced += chunk
                    if produced < outputCount { Self.permute(state, work: work) }
                }
                initialized = outputCount
            }
        }
    }

    @inline(__always)
    private static func loadLittleEndian(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in 0..<8 { value |= UInt64(buffer[index + byte]) &<< (8 * byte) }
        return value
    }

    private static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000, 0x0000_0000_0000_808B,
        0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009, 0x0000_0000_0000_008A, 0x0000_0000_0000_0088,
        0x0000_0000_8000_8009, 0x0000_0000_8000_000A, 0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089,
        0x8000_0000_0000_8003, 0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]

    /// The rho rotation of lane x + 5y.
    private static let rotations: [UInt64] = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14]

    /// Where pi moves lane x + 5y: to y + 5((2x + 3y) mod 5).
    private static let destinations: [Int] = (0..<25).map { index in
        let x = index % 5
        let y = index / 5
        return y + 5 * ((2 * x + 3 * y) % 5)
    }

    /// Keccak-f[1600]: 24 rounds of theta, rho, pi, chi and iota on 25 64-bit lanes (lane x + 5y) in
    /// `a`; `b` is 25 lanes of scratch.
    static func permute(_ a: UnsafeMutableBufferPointer<UInt64>, work b: UnsafeMutableBufferPointer<UInt64>) {
        let roundConstants = Self.roundConstants
        let rotations = Self.rotations
        let destinations = Self.destinations
        for round in 0..<24 {
            // Theta.
            let c0 = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20]
            let c1 = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21]
            let c2 = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22]
            let c3 = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23]
            let c4 = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24]
            let d0 = c4 ^ Self.rotate(c1, 1)
            let d1 = c0 ^ Self.rotate(c2, 1)
            let d2 = c1 ^ Self.rotate(c3, 1)
            let d3 = c2 ^ Self.rotate(c4, 1)
            let d4 = c3 ^ Self.rotate(c0, 1)
            for y in stride(from: 0, to: 25, by: 5) {
                a[y] ^= d0
                a[y + 1] ^= d1
                a[y + 2] ^= d2
                a[y + 3] ^= d3
                a[y + 4] ^= d4
            }
            // Rho and pi.
            for index in 0..<25 {
                b[destinations[index]] = Self.rotate(a[index], rotations[index])
            }
            // Chi.
            for y in stride(from: 0, to: 25, by: 5) {
                let b0 = b[y], b1 = b[y + 1], b2 = b[y + 2], b3 = b[y + 3], b4 = b[y + 4]
                a[y] = b0 ^ (~b1 & b2)
                a[y + 1] = b1 ^ (~b2 & b3)
                a[y + 2] = b2 ^ (~b3 & b4)
                a[y + 3] = b3 ^ (~b4 & b0)
                a[y + 4] = b4 ^ (~b0 & b1)
            }
            // Iota.
            a[0] ^= roundConstants[round]
        }
    }

    /// Rotation left; a count of 0 gives the value back (the masking shifts make `v >> 64` a no-op).
    @inline(__always)
    private static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value &<< count) | (value &>> (64 &- count))
    }
}
