/// What a configured identifier must be to stand as one segment of a request path as it is, with
/// nothing to escape (RFC 3986 `segment-nz` without percent-encoding): letters, digits and
/// `-._~!$&'()*+,;=:@`. A project or app id with `/`, `?`, `#`, `%` or a space in it would otherwise
/// change the URL a provider posts to.
public enum URLPathSegment {
    /// Whether `text` is a non-empty segment of those characters.
    public static func isPlain(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: "-._~!$&'()*+,;=:@".utf8.contains(byte)
            }
        }
    }
}
