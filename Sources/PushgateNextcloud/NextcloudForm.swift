/// Reads `application/x-www-form-urlencoded` text as real clients send it to the proxy: `+` is a space,
/// percent escapes are decoded, and later duplicates win.
///
/// It works on the UTF-8 bytes directly: a server's batch is hundreds of kilobytes of escaped JSON, and
/// Foundation's string-level decoding was the largest single cost of reading one.
enum NextcloudForm {
    /// The fields by name; a later duplicate replaces an earlier one.
    static func parse(_ text: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in Self.pairs(text) { fields[name] = value }
        return fields
    }

    /// Every name and value, in order; a pair with a malformed escape or bytes that are not UTF-8 once
    /// decoded is skipped.
    static func pairs(_ text: Substring) -> [(String, String)] {
        var text = text
        return text.withUTF8 { bytes in
            var pairs: [(String, String)] = []
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
                if end > start {
                    var separator = start
                    while separator < end, bytes[separator] != UInt8(ascii: "=") { separator += 1 }
                    if let name = Self.decode(bytes, start..<separator), !name.isEmpty,
                        let value = separator < end ? Self.decode(bytes, (separator + 1)..<end) : ""
                    {
                        pairs.append((name, value))
                    }
                }
                start = end + 1
            }
            return pairs
        }
    }

    /// One name or value, unescaped; nil when an escape is malformed or the result is not UTF-8.
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        var malformed = false
        // Unescaping only shortens, so the range's length is room enough.
        let output = [UInt8](unsafeUninitializedCapacity: range.count) { output, count in
            var index = range.lowerBound
            var written = 0
            while index < range.upperBound {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "+"):
                    output[written] = UInt8(ascii: " ")
                    index += 1
                case UInt8(ascii: "%"):
                    guard index + 2 < range.upperBound, let high = Self.hexValue(bytes[index + 1]), let low = Self.hexValue(bytes[index + 2]) else {
                        malformed = true
                        count = 0
                        return
                    }
                    output[written] = high << 4 | low
                    index += 3
                default:
                    output[written] = byte
                    index += 1
                }
                written += 1
            }
            count = written
        }
        return malformed ? nil : String(validating: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
