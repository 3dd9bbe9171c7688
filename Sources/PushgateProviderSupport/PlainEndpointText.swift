/// The parts of an endpoint URL in the plain form push services hand out, read without Foundation:
/// `http://` or `https://` (any case), a host of letters, digits, `.`, `-` and `_` (a name or an IPv4
/// address), an optional port of one to five digits up to 65535, then nothing or a path starting with `/`
/// and an optional query, made only of characters a URL carries unescaped and `%` escapes. Any other
/// text (user info, an IPv6 literal, a fragment, a character a URL would have to escape) is not read
/// here; ``PushEndpoint/init(text:)`` gives it to Foundation's parser instead.
struct PlainEndpointText {
    /// Whether the scheme is `https`.
    let isTLS: Bool
    /// The host as written.
    let host: String
    /// The port when one is written.
    let port: Int?
    /// The path (`/` when empty) and the query with its `?`, as written.
    let target: String

    init?(_ text: String) {
        var text = text
        guard let parts = text.withUTF8({ Self.read($0) }) else { return nil }
        self = parts
    }

    private init(isTLS: Bool, host: String, port: Int?, target: String) {
        self.isTLS = isTLS
        self.host = host
        self.port = port
        self.target = target
    }

    private static func read(_ bytes: UnsafeBufferPointer<UInt8>) -> PlainEndpointText? {
        var index: Int
        let isTLS: Bool
        if Self.hasPrefix(bytes, "https://") {
            isTLS = true
            index = 8
        } else if Self.hasPrefix(bytes, "http://") {
            isTLS = false
            index = 7
        } else {
            return nil
        }
        let hostStart = index
        while index < bytes.count, Self.isHostByte(bytes[index]) { index += 1 }
        let hostEnd = index
        guard hostEnd > hostStart else { return nil }
        var port: Int?
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            var value = 0
            let digitsStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]), index - digitsStart < 5 {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            guard index > digitsStart, value <= 65_535 else { return nil }
            port = value
        }
        let targetStart = index
        if index < bytes.count {
            guard bytes[index] == UInt8(ascii: "/") || bytes[index] == UInt8(ascii: "?") else { return nil }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, Self.isHexDigit(bytes[index + 1]), Self.isHexDigit(bytes[index + 2]) else { return nil }
                index += 3
                continue
            }
            guard Self.isTargetByte(byte) else { return nil }
            index += 1
        }
        let host = String(decoding: UnsafeBufferPointer(rebasing: bytes[hostStart..<hostEnd]), as: UTF8.self)
        var target = String(decoding: UnsafeBufferPointer(rebasing: bytes[targetStart..<bytes.count]), as: UTF8.self)
        if target.isEmpty || target.utf8.first == UInt8(ascii: "?") { target = "/" + target }
        return PlainEndpointText(isTLS: isTLS, host: host, port: port, target: target)
    }

    /// Whether `bytes` starts with `prefix`, letters in any case (`prefix` is lower-case ASCII).
    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { expected in
            for offset in 0..<expected.count {
                let byte = bytes[offset]
                let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
                if lowered != expected[offset] { return false }
            }
            return true
        }
    }

    /// A letter, a digit, `.`, `-` or `_`.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        let letter = byte | 0x20
        return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(letter) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        let letter = byte | 0x20
        return (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(letter)
    }

    /// A character a path or query carries unescaped (RFC 3986: unreserved, sub-delims, `:`, `@`, `/`,
    /// `?`), `%` aside.
    private static func isTargetByte(_ byte: UInt8) -> Bool {
        if Self.isHostByte(byte) { return true }
        switch byte {
        case UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="),
            UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"):
            return true
        default:
            return false
        }
    }
}
