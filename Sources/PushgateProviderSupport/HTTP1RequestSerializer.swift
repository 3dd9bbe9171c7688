import NIOCore
import NIOHTTP1

/// Writes one HTTP/1.1 request (request line, headers, empty line, body) into one buffer, as a connection
/// of ``HTTP1ConnectionPool`` sends it: one write, one flush.
///
/// Header names must be tokens and values must hold no CR, LF or NUL, the request target no whitespace or
/// control bytes: otherwise nothing is written (a value from elsewhere, an access token say, could
/// otherwise add lines to the request).
enum HTTP1RequestSerializer {
    /// Why a request was not written; names the header, never its value.
    struct Invalid: Error, CustomStringConvertible {
        let reason: String
        var description: String { "request not sent: \(self.reason)" }
    }

    /// The request's bytes.
    static func serialize(_ head: HTTPRequestHead, body: ByteBuffer, allocator: ByteBufferAllocator) throws(Invalid) -> ByteBuffer {
        guard !head.uri.isEmpty, Self.count(in: head.uri, where: { $0 <= 0x20 || $0 == 0x7F }) == 0 else {
            throw Invalid(reason: "the request target holds whitespace or control bytes")
        }
        var size = head.method.rawValue.utf8.count + head.uri.utf8.count + 14 + body.readableBytes
        for (name, value) in head.headers {
            guard !name.isEmpty, name.utf8.allSatisfy(\.isHTTPTokenByte) else { throw Invalid(reason: "a header name that is not a token") }
            guard Self.count(in: value, where: { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }) == 0 else {
                throw Invalid(reason: "header \(name) holds a line break or NUL")
            }
            size += name.utf8.count + value.utf8.count + 4
        }
        var buffer = allocator.buffer(capacity: size)
        // One copy into the buffer for the whole head: a `ByteBuffer` write per piece costs about 250
        // instructions each.
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size - body.readableBytes) { raw in
            var at = 0
            func put(_ text: String, then suffix: StaticString) {
                var text = text
                text.withUTF8 { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: raw[at..<at + bytes.count]).copyMemory(from: UnsafeRawBufferPointer(bytes))
                    at += bytes.count
                }
                UnsafeMutableRawBufferPointer(rebasing: raw[at..<at + suffix.utf8CodeUnitCount]).copyMemory(
                    from: UnsafeRawBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount))
                at += suffix.utf8CodeUnitCount
            }
            put(head.method.rawValue, then: " ")
            put(head.uri, then: " HTTP/1.1\r\n")
            for (name, value) in head.headers {
                put(name, then: ": ")
                put(value, then: "\r\n")
            }
            put("", then: "\r\n")
            return at
        }
        var body = body
        buffer.writeBuffer(&body)
        return buffer
    }

    /// How many of the text's UTF-8 bytes match: a loop without an early exit, over contiguous bytes, which
    /// the compiler vectorises (an access token is hundreds of bytes, and `allSatisfy` over the UTF-8 view
    /// cost several instructions a byte).
    @inline(__always)
    private static func count(in text: String, where matches: (UInt8) -> Bool) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var found = 0
            for byte in bytes { found &+= matches(byte) ? 1 : 0 }
            return found
        }
    }
}
