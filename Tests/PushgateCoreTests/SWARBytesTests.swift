import PushgateCore
import Testing

@Suite("SWAR byte tests")
struct SWARBytesTests {
    /// Words whose every byte is `filler` except one, which is each value at each position.
    static func words(filler: UInt8) -> [(word: UInt64, bytes: [UInt8])] {
        var words: [(UInt64, [UInt8])] = []
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: filler, count: 8)
                bytes[position] = UInt8(value)
                let word = bytes.withUnsafeBufferPointer { SWARBytes.load($0.baseAddress!, at: 0) }
                words.append((word, bytes))
            }
        }
        return words
    }

    @Test("says whether a byte equals the one sought, for every byte at every position")
    func equalTo() {
        for filler: UInt8 in [0x00, 0x41, 0x7F, 0x80, 0xFF] {
            for (word, bytes) in Self.words(filler: filler) {
                for sought: UInt8 in [0x00, 0x22, 0x25, 0x2B, 0x5C, 0x7F, 0x80, 0xFF] {
                    #expect((SWARBytes.bytes(of: word, equalTo: sought) != 0) == bytes.contains(sought), "\(bytes) \(sought)")
                }
            }
        }
    }

    @Test("says whether a byte is below a limit, for every byte at every position")
    func below() {
        for filler: UInt8 in [0x20, 0x41, 0x7F, 0x80, 0xFF] {
            for (word, bytes) in Self.words(filler: filler) {
                for limit: UInt8 in [0x01, 0x20, 0x21, 0x80] where filler >= limit {
                    #expect((SWARBytes.bytes(of: word, below: limit) != 0) == bytes.contains { $0 < limit }, "\(bytes) \(limit)")
                }
            }
        }
    }

    @Test("says whether a byte is outside ASCII")
    func nonASCII() {
        for (word, bytes) in Self.words(filler: 0x41) {
            #expect((SWARBytes.nonASCIIBytes(of: word) != 0) == bytes.contains { $0 >= 0x80 })
        }
    }

    /// Words with two bytes that hold (where a borrow from the first can flag later bytes falsely), and
    /// random words: the first flag is always the first byte that holds.
    @Test("finds the first byte that holds, whatever follows it")
    func firstFlaggedOffset() {
        var generator = SystemRandomNumberGenerator()
        var cases: [[UInt8]] = []
        for first in 0..<8 {
            for second in first..<8 {
                for filler: UInt8 in [0x00, 0x01, 0x24, 0x26, 0x2A, 0x2C, 0x80, 0xFF] {
                    var bytes = [UInt8](repeating: filler, count: 8)
                    bytes[first] = 0x25
                    bytes[second] = 0x2B
                    cases.append(bytes)
                }
            }
        }
        for _ in 0..<20_000 {
            cases.append((0..<8).map { _ in [0x25, 0x2B, 0x24, 0x26, 0x00, 0xFF, UInt8.random(in: 0...255, using: &generator)].randomElement(using: &generator)! })
        }
        for bytes in cases {
            let word = bytes.withUnsafeBufferPointer { SWARBytes.load($0.baseAddress!, at: 0) }
            let flags = SWARBytes.bytes(of: word, equalTo: 0x25) | SWARBytes.bytes(of: word, equalTo: 0x2B)
            guard let expected = bytes.firstIndex(where: { $0 == 0x25 || $0 == 0x2B }) else {
                #expect(flags == 0, "\(bytes)")
                continue
            }
            #expect(SWARBytes.firstFlaggedOffset(flags) == expected, "\(bytes)")
            let control = SWARBytes.bytes(of: word, below: 0x20) | SWARBytes.nonASCIIBytes(of: word)
            if let first = bytes.firstIndex(where: { $0 < 0x20 || $0 >= 0x80 }) {
                #expect(SWARBytes.firstFlaggedOffset(control) == first, "\(bytes)")
            }
        }
    }
}
