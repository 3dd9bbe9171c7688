import Foundation

/// `application/x-www-form-urlencoded` bodies in which every byte but RFC 3986's unreserved characters
/// (`A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`, `_`, `~`) is percent-encoded, so that `+`, `/`, `=` (base64) and
/// `"\n"` (PEM) arrive unchanged whichever form decoder the other side uses.
enum FormURLEncoding {
    /// The body for `fields`, in the order given.
    static func encode(_ fields: [(name: String, value: String)]) -> Data {
        let pairs = fields.map { Self.percentEncode($0.name) + "=" + Self.percentEncode($0.value) }
        return Data(pairs.joined(separator: "&").utf8)
    }

    /// `text` with every UTF-8 byte except the unreserved characters written as `%XX`.
    static func percentEncode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(byte)
            default:
                encoded.append(UInt8(ascii: "%"))
                encoded.append(hex[Int(byte >> 4)])
                encoded.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// The `Content-Type` of such a body.
    static let contentType = "application/x-www-form-urlencoded"
}
