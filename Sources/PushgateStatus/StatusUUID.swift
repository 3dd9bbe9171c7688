/// Whether a string parses as a UUID the way status-go's parser (Google's uuid package) accepts one:
/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, the same in braces, with a `urn:uuid:` prefix, or 32 bare hex
/// digits; hex in either case.
enum StatusUUID {
    static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        switch bytes.count {
        case 36: return Self.isHyphenated(bytes[...])
        case 38: return bytes.first == UInt8(ascii: "{") && bytes.last == UInt8(ascii: "}") && Self.isHyphenated(bytes[1..<37])
        case 45:
            return String(decoding: bytes[0..<9], as: UTF8.self).lowercased() == "urn:uuid:" && Self.isHyphenated(bytes[9...])
        case 32: return bytes.allSatisfy(Self.isHex)
        default: return false
        }
    }

    private static func isHyphenated(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == 36 else { return false }
        for (offset, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(offset) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !Self.isHex(byte) {
                return false
            }
        }
        return true
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
