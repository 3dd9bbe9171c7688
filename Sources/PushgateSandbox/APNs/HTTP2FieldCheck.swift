import NIOHPACK
import PushgateProviderSupport

/// The checks RFC 9113 (§ 8.2, 8.3) makes of an HTTP/2 request's header block and of its trailers, made
/// as NIOHTTP2's own header-block validation makes them, but over each field's bytes at once: for the
/// APNs emulator, NIOHTTP2's validation was a sixth of its work per request (the provider token alone
/// is some 200 bytes, checked one closure call a byte).
///
/// A block is malformed when:
/// - a field name is empty, or has a byte other than a lower-case `tchar` (after a pseudo-header's colon);
/// - a pseudo-header follows a regular field, is unknown (`:status` and `:protocol` included: extended
///   CONNECT is not offered), or appears twice; a request lacks `:method`, `:scheme` or `:path` (a CONNECT
///   request: has anything but `:method` and `:authority`); `:path` is empty; a pseudo-header's value has
///   a control byte, a space or DEL;
/// - a regular field is connection-specific (`connection`, `transfer-encoding`, `proxy-connection`,
///   `keep-alive`, `upgrade`), is `te` with another value than `trailers` (in requests), or its value has
///   NUL, CR or LF;
/// - trailers carry any pseudo-header.
enum HTTP2FieldCheck {
    /// Whether a request's header block is malformed.
    static func isMalformed(request headers: HPACKHeaders) -> Bool {
        var seen = PseudoHeaders()
        var regularFieldsBegun = false
        var isConnect = false
        for (name, value, _) in headers {
            if name.utf8.first == UInt8(ascii: ":") {
                // After a regular field, unknown (`:status`, `:protocol`), twice, or a bad name or value.
                guard !regularFieldsBegun, Self.isToken(name, from: 1), let field = PseudoHeaders(requestField: name),
                    !seen.contains(field), Self.isPseudoHeaderValue(value)
                else { return true }
                seen.insert(field)
                if field == .method { isConnect = value == "CONNECT" }
                if field == .path, value.isEmpty { return true }
            } else {
                regularFieldsBegun = true
                if Self.isMalformed(regularField: name, value: value) { return true }
                if name == "te", value != "trailers" { return true }
            }
        }
        let (allowed, mandatory): (PseudoHeaders, PseudoHeaders) =
            isConnect ? ([.method, .authority], [.method, .authority]) : ([.method, .scheme, .path, .authority], [.method, .scheme, .path])
        return !(allowed.isSuperset(of: seen) && mandatory.isSubset(of: seen))
    }

    /// Whether a request's trailers are malformed.
    static func isMalformed(trailers headers: HPACKHeaders) -> Bool {
        headers.contains { name, value, _ in
            name.utf8.first == UInt8(ascii: ":") || Self.isMalformed(regularField: name, value: value)
        }
    }

    private static func isMalformed(regularField name: String, value: String) -> Bool {
        guard Self.isToken(name, from: 0) else { return true }
        // Only names of the connection-specific fields' lengths are compared with them.
        switch name.utf8.count {
        case 7, 10, 16, 17:
            switch name {
            case "connection", "transfer-encoding", "proxy-connection", "keep-alive", "upgrade":
                return true
            default:
                break
            }
        default:
            break
        }
        return !Self.isFieldValue(value)
    }

    /// Whether `name`'s bytes from `offset` on are one or more lower-case `tchar`s (RFC 9110 § 5.6.2).
    private static func isToken(_ name: String, from offset: Int) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            guard bytes.count > offset else { return false }
            return bytes[offset...].allSatisfy { $0.isHTTPTokenByte && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
        }
    }

    /// Whether a pseudo-header's value is free of control bytes, spaces and DEL.
    private static func isPseudoHeaderValue(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in !bytes.contains { $0 <= 0x20 || $0 == 0x7F } }
    }

    /// Whether a field value is free of NUL, CR and LF (RFC 9113 § 8.2.1).
    private static func isFieldValue(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in !bytes.contains { $0 == 0x00 || $0 == 0x0A || $0 == 0x0D } }
    }

    /// The request pseudo-headers.
    private struct PseudoHeaders: OptionSet {
        var rawValue: UInt8 = 0

        static let method = PseudoHeaders(rawValue: 1)
        static let scheme = PseudoHeaders(rawValue: 2)
        static let path = PseudoHeaders(rawValue: 4)
        static let authority = PseudoHeaders(rawValue: 8)

        init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        init() {}

        /// The pseudo-header a request may carry by this name (with its colon), or nil.
        init?(requestField name: String) {
            switch name {
            case ":method": self = .method
            case ":scheme": self = .scheme
            case ":path": self = .path
            case ":authority": self = .authority
            default: return nil
            }
        }
    }
}
