/// Finds the end of a run of string bytes that JSON carries as they are: no quote, no backslash, no
/// control character. It reads eight bytes a step (a byte-at-a-time loop was most of the cost of reading
/// and writing the long base64 texts notifications carry).
enum JSONStringScanner {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080
    private static let quotes: UInt64 = 0x2222_2222_2222_2222
    private static let backslashes: UInt64 = 0x5C5C_5C5C_5C5C_5C5C
    private static let spaces: UInt64 = 0x2020_2020_2020_2020

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
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                // Each term has a byte's high bit set exactly when some byte of the word is below 0x20,
                // or equal to the quote or the backslash (a borrow only crosses from a byte that is).
                let quote = word ^ Self.quotes
                let backslash = word ^ Self.backslashes
                var stops = ((word &- Self.spaces) & ~word) | ((quote &- Self.ones) & ~quote) | ((backslash &- Self.ones) & ~backslash)
                if stopAtNonASCII { stops |= word }
                if stops & Self.highBits != 0 { break }
                seen |= word
                index &+= 8
            }
            if seen & Self.highBits != 0 { nonASCII |= 0x80 }
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
