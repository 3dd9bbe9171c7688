/// HPACK's Huffman code (RFC 7541 Appendix B), for reading the header blocks APNs answers with.
///
/// The code is canonical: within each length, codes are consecutive in symbol order, and each length's
/// first code follows the previous length's last. So the 257 code lengths below (symbols 0–255 and EOS,
/// 256) determine every code.
enum HPACKHuffmanCode {
    /// Each symbol's code length in bits, by symbol (Appendix B's "len in bits" column).
    static let lengths: [UInt8] = [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
        28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
        5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
        13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
        7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
        15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
        6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
        20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
        24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
        22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
        21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
        26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
        19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
        26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
        30,
    ]

    /// The symbol that ends a code and must never appear in a string (§5.2).
    static let endOfString = 256

    /// The decoder's state machine, built once from ``lengths``: for each node of the code tree that a
    /// string can stop at between nibbles (the 256 inner nodes) and each 4-bit nibble, the node reached,
    /// the symbol completed on the way if any (codes are at least 5 bits, so at most one), and whether EOS
    /// was completed. Decoding then costs two look-ups a byte instead of a step a bit.
    struct Machine: Sendable {
        /// By `node << 4 | nibble`: bits 0–7 the next node, bits 8–16 the symbol + 1 (0 for none), bit 17
        /// set when the nibble completes EOS.
        let steps: [UInt32]
        /// By node: whether a string may end there, on a proper prefix of EOS of at most 7 bits (the
        /// root, with nothing pending, included).
        let mayEnd: [Bool]

        init(lengths: [UInt8]) {
            // The canonical codes: by length, then by symbol, consecutive.
            let order = lengths.indices.sorted { (lengths[$0], $0) < (lengths[$1], $1) }
            var codes = [UInt32](repeating: 0, count: lengths.count)
            var code: UInt32 = 0
            var previousLength = lengths[order[0]]
            for (position, symbol) in order.enumerated() {
                if position > 0 { code = (code + 1) << UInt32(lengths[symbol] - previousLength) }
                codes[symbol] = code
                previousLength = lengths[symbol]
            }
            // The tree: inner nodes by number (the root is 0); a child is an inner node (>= 0) or a leaf
            // -(symbol + 1).
            var children: [[Int]] = [[Int.min, Int.min]]
            var depth = [0]
            var onesOnly = [true]
            for symbol in lengths.indices {
                var node = 0
                let length = Int(lengths[symbol])
                for position in stride(from: length - 1, through: 0, by: -1) {
                    let bit = Int((codes[symbol] >> UInt32(position)) & 1)
                    if position == 0 {
                        children[node][bit] = -(symbol + 1)
                    } else {
                        if children[node][bit] == Int.min {
                            children.append([Int.min, Int.min])
                            depth.append(depth[node] + 1)
                            onesOnly.append(onesOnly[node] && bit == 1)
                            children[node][bit] = children.count - 1
                        }
                        node = children[node][bit]
                    }
                }
            }
            var steps = [UInt32](repeating: 0, count: children.count << 4)
            for start in children.indices {
                for nibble in 0..<16 {
                    var node = start
                    var emitted: UInt32 = 0
                    var endOfString = false
                    for position in stride(from: 3, through: 0, by: -1) {
                        let next = children[node][(nibble >> position) & 1]
                        if next >= 0 {
                            node = next
                        } else {
                            let symbol = -next - 1
                            if symbol == HPACKHuffmanCode.endOfString { endOfString = true }
                            emitted = UInt32(symbol + 1)
                            node = 0
                        }
                    }
                    steps[start << 4 | nibble] = UInt32(node) | emitted << 8 | (endOfString ? 1 << 17 : 0)
                }
            }
            self.steps = steps
            self.mayEnd = children.indices.map { onesOnly[$0] && depth[$0] <= 7 }
        }
    }

    static let machine = Machine(lengths: lengths)

    /// Why a Huffman-coded string cannot be read.
    enum Failure: Error {
        case endOfStringSymbol
        case badPadding
    }

    /// Decodes `bytes` (§5.2): the symbols, then at most 7 bits of padding that are the start of EOS (all
    /// ones). With `keep` false only the decoded length is counted and the bytes come back empty.
    static func decode(_ bytes: UnsafeRawBufferPointer, keep: Bool = true) throws(Failure) -> (length: Int, bytes: [UInt8]) {
        let machine = Self.machine
        // Everything the loop changes is local to the closure: captured variables would be boxed and
        // checked for exclusive access on every step.
        let (decoded, output, node, failed) = machine.steps.withUnsafeBufferPointer { steps -> (Int, [UInt8], Int, Bool) in
            var output: [UInt8] = []
            // Each symbol is at least 5 bits.
            if keep { output.reserveCapacity(bytes.count * 8 / 5) }
            var decoded = 0
            var node = 0
            var flags: UInt32 = 0
            for byte in bytes {
                let high = steps[node << 4 | Int(byte >> 4)]
                let low = steps[Int(high & 0xFF) << 4 | Int(byte & 0x0F)]
                node = Int(low & 0xFF)
                flags |= high | low
                // Each nibble completes at most one symbol (codes are at least 5 bits), a byte up to two.
                let first = high >> 8 & 0x1FF
                if first != 0 {
                    if keep { output.append(UInt8(truncatingIfNeeded: first - 1)) }
                    decoded += 1
                }
                let second = low >> 8 & 0x1FF
                if second != 0 {
                    if keep { output.append(UInt8(truncatingIfNeeded: second - 1)) }
                    decoded += 1
                }
            }
            return (decoded, output, node, flags & 1 << 17 != 0)
        }
        guard !failed else { throw .endOfStringSymbol }
        // What is left must be a proper prefix of EOS: fewer than 8 bits, all ones.
        guard machine.mayEnd[node] else { throw .badPadding }
        return (decoded, output)
    }
}
