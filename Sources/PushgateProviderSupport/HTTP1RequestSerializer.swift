import NIOCore
import NIOHTTP1
import PushgateCore

/// Writes one HTTP/1.1 request (request line, `Host`, the headers, `Content-Length`, empty line, body)
/// into one buffer, as a connection of ``HTTP1ConnectionPool`` sends it: one write, one flush.
///
/// What it writes was checked before: the request target and `Host` when the destination was read from
/// its URL, the headers when they became ``HTTP1HeaderLines``. So writing a request is copying bytes.
enum HTTP1RequestSerializer {
    /// The request's bytes, or nil when the destination's target cannot be sent (whitespace or control
    /// bytes in it).
    static func serialize(
        _ method: HTTPMethod, to destination: HTTP1ConnectionPool.Destination, headers: HTTP1HeaderLines, body: ByteBuffer,
        allocator: ByteBufferAllocator
    ) -> ByteBuffer? {
        guard let afterMethod = destination.afterMethod else { return nil }
        var methodName = method.rawValue
        return methodName.withUTF8 { methodBytes in
            let length = body.readableBytes
            let digits = Self.digitCount(length)
            let headSize = methodBytes.count + afterMethod.count + headers.bytes.count + Self.contentLength.count + digits + 4
            var buffer = allocator.buffer(capacity: headSize + body.readableBytes)
            // One copy into the buffer for the whole head: a `ByteBuffer` write per piece costs about 250
            // instructions each.
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: headSize) { raw in
                var at = 0
                Self.copy(UnsafeRawBufferPointer(methodBytes), to: raw, at: &at)
                afterMethod.withUnsafeBytes { Self.copy($0, to: raw, at: &at) }
                headers.bytes.withUnsafeBytes { Self.copy($0, to: raw, at: &at) }
                Self.contentLength.withUnsafeBytes { Self.copy($0, to: raw, at: &at) }
                var rest = length
                var digit = at + digits
                repeat {
                    digit -= 1
                    raw[digit] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                } while rest > 0
                at += digits
                raw[at] = UInt8(ascii: "\r")
                raw[at + 1] = UInt8(ascii: "\n")
                raw[at + 2] = UInt8(ascii: "\r")
                raw[at + 3] = UInt8(ascii: "\n")
                return at + 4
            }
            var body = body
            buffer.writeBuffer(&body)
            return buffer
        }
    }

    /// `Content-Length: `.
    private static let contentLength: [UInt8] = Array("Content-Length: ".utf8)

    @inline(__always)
    private static func copy(_ source: UnsafeRawBufferPointer, to raw: UnsafeMutableRawBufferPointer, at: inout Int) {
        UnsafeMutableRawBufferPointer(rebasing: raw[at..<at + source.count]).copyMemory(from: source)
        at += source.count
    }

    /// How many decimal digits `value` has (1 for 0).
    private static func digitCount(_ value: Int) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        return count
    }

    /// What follows the method in the request line, and the `Host` header: ` <target> HTTP/1.1`, CR LF,
    /// `Host: <host>`, CR LF; nil when the target is empty or holds whitespace or control bytes, or the
    /// host holds a control byte.
    static func afterMethod(target: String, host: String) -> [UInt8]? {
        guard !target.isEmpty, target.utf8Count(where: { $0 <= 0x20 || $0 == 0x7F }) == 0,
            host.utf8Count(where: { $0 < 0x20 || $0 == 0x7F }) == 0
        else { return nil }
        // Appended piece by piece: an interpolated string made first cost four string appends.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(target.utf8.count + host.utf8.count + 25)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: target.utf8)
        bytes.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
        bytes.append(contentsOf: host.utf8)
        bytes.append(contentsOf: "\r\n".utf8)
        return bytes
    }
}
