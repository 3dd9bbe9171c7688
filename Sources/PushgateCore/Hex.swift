/// Hexadecimal text of bytes (digests, APNs device tokens, Status keys and topics): written in lower case
/// without `String(format:)` per byte, read in either case.
public enum Hex {
    /// `bytes` as lowercase hex, two digits a byte.
    ///
    /// Inlinable so each caller gets a copy specialised for its sequence (`Data`, a digest, an array): an
    /// unspecialised one reads each byte through a protocol witness, which cost more than the hex itself.
    @inlinable
    public static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let text = bytes.withContiguousStorageIfAvailable({ Self.lowercase(contiguous: UnsafeRawBufferPointer($0)) }) {
            return text
        }
        return Array(bytes).withUnsafeBytes { Self.lowercase(contiguous: $0) }
    }

    /// `bytes` as lowercase hex, written straight into the string's storage.
    @usableFromInline
    static func lowercase(contiguous bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            var index = 0
            for byte in bytes {
                text[index] = Self.digit(byte >> 4)
                text[index + 1] = Self.digit(byte & 0x0f)
                index += 2
            }
            return index
        }
    }

    /// Appends `bytes` to `output` as lowercase hex, two digits a byte (a log line's id without its string).
    public static func appendLowercase(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + bytes.count * 2)
        for byte in bytes {
            output.append(Self.digit(byte >> 4))
            output.append(Self.digit(byte & 0x0f))
        }
    }

    /// The lowercase hex digit of a value below 16.
    static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The bytes of hex digits (either case, no prefix); nil when `text` is not hex or has an odd length.
    public static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.value(ofDigit: digits[index]), let low = Self.value(ofDigit: digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    /// The value of one hex digit of either case, or nil for any other byte. Inlinable: readers call it
    /// for every digit.
    @inlinable
    public static func value(ofDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
