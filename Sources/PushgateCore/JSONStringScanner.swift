/// Finds the end of a run of string bytes that JSON carries as they are: no quote, no backslash, no
/// control character. It reads eight bytes a step (a byte-at-a-time loop was most of the cost of reading
/// and writing the long base64 texts notifications carry).
enum JSONStringScanner {
    /// The index of the first byte at or after `start` that is `"`, `\` or below 0x20 (or, with
    /// `stopAtNonASCII`, 0x80 or above), or `bytes.count` when there is none. `nonASCII` gets 0x80 or'd
    /// in when a byte passed over is 0x80 or above.
    @inline(__always)
    static func plainRunEnd(
        in bytes: UnsafeBufferPointer<UInt8>, from start: Int, stopAtNonASCII: Bool, nonASCII: inout UInt8
    ) -> Int {
        var index = start
        let count = bytes.count
        if let base = bytes.baseAddress {
            var seen: UInt64 = 0
            while index &+ 8 <= count {
                let word = SWARBytes.load(base, at: index)
                var stops = SWARBytes.bytes(of: word, below: 0x20)
                    | SWARBytes.bytes(of: word, equalTo: UInt8(ascii: "\""))
                    | SWARBytes.bytes(of: word, equalTo: UInt8(ascii: "\\"))
                if stopAtNonASCII { stops |= SWARBytes.nonASCIIBytes(of: word) }
                if stops != 0 {
                    // Straight to the stop: the bytes before it are passed over.
                    let plain = SWARBytes.firstFlaggedOffset(stops)
                    if plain > 0 { seen |= word & (UInt64.max &>> UInt64(64 &- 8 &* plain)) }
                    index &+= plain
                    break
                }
                seen |= word
                index &+= 8
            }
            if SWARBytes.nonASCIIBytes(of: seen) != 0 { nonASCII |= 0x80 }
        }
        while index < count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (stopAtNonASCII && byte >= 0x80) { break }
            nonASCII |= byte
            index &+= 1
        }
        return index
    }
}
