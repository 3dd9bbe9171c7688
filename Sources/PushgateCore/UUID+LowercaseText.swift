public import Foundation

extension UUID {
    /// The UUID's text in lower case (`8-4-4-4-12` hex digits), as `uuidString.lowercased()` gives it but
    /// without the C formatter and the second string that way takes (an APNs request id on every request).
    public var lowercaseText: String {
        withUnsafeBytes(of: self.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var index = 0
                for (offset, byte) in bytes.enumerated() {
                    if offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                        text[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    text[index] = Hex.digit(byte >> 4)
                    text[index + 1] = Hex.digit(byte & 0x0f)
                    index += 2
                }
                return index
            }
        }
    }
}
