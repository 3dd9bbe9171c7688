import Foundation

/// Base64url without padding (RFC 4648 §5), as JWTs, VAPID and Web Push keys use it.
///
/// Both directions work on bytes directly (no intermediate Foundation strings): JWT and key handling
/// runs on every delivery and in every emulator request.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's 6-bit value in either alphabet (`+`/`-` are 62, `/`/`_` are 63); 0xFF for any other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in Self.alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// Encodes bytes.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        var output = [UInt8]()
        output.reserveCapacity((input.count * 4 + 2) / 3)
        let alphabet = Self.alphabet
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
            output.append(alphabet[Int(chunk & 0x3F)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let chunk = UInt32(input[index]) << 16
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
        case 2:
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64url (padded or not; plain base64 is accepted too).
    /// - Returns: nil when the text is not base64.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        if let bytes = text.withUTF8({ Self.decodeUnpadded($0) }) { return bytes }
        return Self.decodeLeniently(text)
    }

    /// The fast path: text made only of alphabet characters (no padding, no white space), decoded
    /// directly. Nil when the text has anything else; ``decodeLeniently(_:)`` then decides.
    private static func decodeUnpadded(_ utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard utf8.count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(utf8.count * 3 / 4)
        let values = Self.values
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in utf8 {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }

    /// Everything else (white space around the text, padding, invalid characters): trimmed, translated to
    /// base64, padded to a multiple of four and decoded by Foundation, exactly as before the fast path.
    private static func decodeLeniently(_ text: String) -> [UInt8]? {
        var base64 = text.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}
