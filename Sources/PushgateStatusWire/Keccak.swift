/// The Keccak-f[1600] permutation with a sponge, and the two functions Status uses on it: Ethereum's
/// Keccak-256 (the original padding, domain byte 0x01 — not NIST SHA3-256) and FIPS 202's SHAKE-256
/// (domain byte 0x1F), both with a rate of 136 bytes.
public enum Keccak {
    /// Keccak-256 of `bytes` (32 bytes), as Ethereum and status-go compute it.
    public static func keccak256(_ bytes: [UInt8]) -> [UInt8] {
        Self.sponge(bytes, domain: 0x01, outputCount: 32)
    }

    /// SHAKE-256 of `bytes`, `outputCount` bytes long (status-go uses 64).
    public static func shake256(_ bytes: [UInt8], outputCount: Int = 64) -> [UInt8] {
        Self.sponge(bytes, domain: 0x1F, outputCount: outputCount)
    }

    private static let rate = 136

    private static func sponge(_ bytes: [UInt8], domain: UInt8, outputCount: Int) -> [UInt8] {
        var state = [UInt64](repeating: 0, count: 25)
        var offset = 0
        bytes.withUnsafeBufferPointer { input in
            // Absorb whole blocks.
            while input.count - offset >= Self.rate {
                for lane in 0..<(Self.rate / 8) {
                    state[lane] ^= Self.loadLittleEndian(input, at: offset + lane * 8)
                }
                Self.permute(&state)
                offset += Self.rate
            }
            // The last, partial block with its padding.
            var block = [UInt8](repeating: 0, count: Self.rate)
            for index in 0..<(input.count - offset) { block[index] = input[offset + index] }
            block[input.count - offset] ^= domain
            block[Self.rate - 1] ^= 0x80
            block.withUnsafeBufferPointer { padded in
                for lane in 0..<(Self.rate / 8) {
                    state[lane] ^= Self.loadLittleEndian(padded, at: lane * 8)
                }
            }
        }
        Self.permute(&state)
        var output: [UInt8] = []
        output.reserveCapacity(outputCount)
        while true {
            for lane in 0..<(Self.rate / 8) {
                var value = state[lane]
                for _ in 0..<8 {
                    output.append(UInt8(truncatingIfNeeded: value))
                    if output.count == outputCount { return output }
                    value >>= 8
                }
            }
            Self.permute(&state)
        }
    }

    private static func loadLittleEndian(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in (0..<8).reversed() { value = value << 8 | UInt64(buffer[index + byte]) }
        return value
    }

    private static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000, 0x0000_0000_0000_808B,
        0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009, 0x0000_0000_0000_008A, 0x0000_0000_0000_0088,
        0x0000_0000_8000_8009, 0x0000_0000_8000_000A, 0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089,
        0x8000_0000_0000_8003, 0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]

    /// The rotation of lane x + 5y.
    private static let rotations: [UInt64] = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14]

    /// Where rho-pi moves lane x + 5y: to y + 5((2x + 3y) mod 5).
    private static let destinations: [Int] = (0..<25).map { index in
        let x = index % 5
        let y = index / 5
        return y + 5 * ((2 * x + 3 * y) % 5)
    }

    /// Keccak-f[1600]: 24 rounds of theta, rho, pi, chi and iota on 25 64-bit lanes (lane x + 5y).
    static func permute(_ state: inout [UInt64]) {
        state.withUnsafeMutableBufferPointer { a in
            var c = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            var b = [UInt64](repeating: 0, count: 25)
            for round in 0..<24 {
                // Theta.
                c.0 = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20]
                c.1 = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21]
                c.2 = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22]
                c.3 = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23]
                c.4 = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24]
                let d0 = c.4 ^ Self.rotate(c.1, 1)
                let d1 = c.0 ^ Self.rotate(c.2, 1)
                let d2 = c.1 ^ Self.rotate(c.3, 1)
                let d3 = c.2 ^ Self.rotate(c.4, 1)
                let d4 = c.3 ^ Self.rotate(c.0, 1)
                for y in stride(from: 0, to: 25, by: 5) {
                    a[y] ^= d0
                    a[y + 1] ^= d1
                    a[y + 2] ^= d2
                    a[y + 3] ^= d3
                    a[y + 4] ^= d4
                }
                // Rho and pi.
                for index in 0..<25 {
                    b[Self.destinations[index]] = Self.rotate(a[index], Self.rotations[index])
                }
                // Chi.
                for y in stride(from: 0, to: 25, by: 5) {
                    for x in 0..<5 {
                        a[y + x] = b[y + x] ^ (~b[y + (x + 1) % 5] & b[y + (x + 2) % 5])
                    }
                }
                // Iota.
                a[0] ^= Self.roundConstants[round]
            }
        }
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        count == 0 ? value : (value << count) | (value >> (64 - count))
    }
}
