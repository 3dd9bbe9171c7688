/// Case-insensitive comparison of ASCII protocol tokens (header names, connection options), without
/// building a lower-cased copy: the HTTP/1 readers and writers on both sides of the gateway compare names
/// this way on every message.
public enum ASCIICaseFolding {
    /// Whether `bytes`, with ASCII letters lower-cased, are exactly `lowercase`.
    @inlinable
    public static func equals(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count {
            guard Self.folded(bytes[index]) == expected[index] else { return false }
        }
        return true
    }

    /// `byte` with an ASCII upper-case letter made lower-case; any other byte as it is.
    @inlinable
    public static func folded(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// Whether `text`, with ASCII letters lower-cased, is exactly `lowercase`.
    @inlinable
    public static func equals(_ text: String, _ lowercase: StaticString) -> Bool {
        guard text.utf8.count == lowercase.utf8CodeUnitCount else { return false }
        var text = text
        return text.withUTF8 { Self.equals(UnsafeRawBufferPointer($0), lowercase) }
    }
}
