import NIOCore
import PushgateCore

/// Reads a server's HTTP/1.x answers (RFC 9112) from the bytes of a connection that carries one request
/// at a time, keeping only what ``HTTP1Answer`` holds: the status, `Retry-After`, the start of the body,
/// and whether the connection may carry another request.
///
/// Bodies are framed as RFC 9112 §6.3 says for answers: none for 1xx, 204 and 304; chunked when the last
/// transfer coding is `chunked`; read until the connection closes for any other transfer coding or when
/// there is no `Content-Length`; otherwise `Content-Length` bytes. Informational answers (100 Continue, 103
/// Early Hints) are skipped. Lines may end in CRLF or a bare LF. What does not parse is an error
/// (``Malformed``), and the connection is then not reused.
struct HTTP1ResponseParser {
    /// Why bytes could not be read as an answer; says where, never what the bytes were.
    struct Malformed: Error, CustomStringConvertible {
        let reason: String
        var description: String { "malformed answer: \(self.reason)" }
    }

    /// The most bytes of an answer's status line and header lines together (and of its trailer lines).
    static let headLimit = 64 * 1024
    /// The most bytes of one chunk-size line.
    static let chunkLineLimit = 1024

    private enum State {
        case statusLine
        case headerLines
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailerLines
        case untilClose
    }

    /// The most bytes of a body kept (the rest is read and dropped).
    let bodyLimit: Int
    private var state = State.statusLine
    /// Bytes read but not yet parsed; nil when there are none (so the channel's read buffer is not held).
    private var pending: ByteBuffer?
    /// The answer being read.
    private var answer = Answer()

    private struct Answer {
        var headBytes = 0
        var status = 0
        var isHTTP10 = false
        var retryAfter: String?
        var contentLength: Int?
        var transferCoded = false
        var chunked = false
        var close = false
        var keepAlive = false
        var body: [UInt8] = []
    }

    init(bodyLimit: Int) {
        self.bodyLimit = bodyLimit
    }

    /// Whether bytes were read that are not part of a finished answer.
    var hasUnparsedBytes: Bool { (self.pending?.readableBytes ?? 0) > 0 }

    /// Whether an answer has started (some of its bytes were read) and not ended.
    var isInsideAnswer: Bool {
        if case .statusLine = self.state { return self.answer.headBytes > 0 || self.hasUnparsedBytes }
        return true
    }

    /// Takes bytes read from the connection and returns the answer once it is complete. Bytes after a
    /// complete answer stay unparsed (``hasUnparsedBytes``).
    mutating func read(_ bytes: ByteBuffer) throws(Malformed) -> HTTP1Answer? {
        if var pending = self.pending {
            self.pending = nil
            var bytes = bytes
            pending.writeBuffer(&bytes)
            self.pending = pending
        } else {
            self.pending = bytes
        }
        let answer = try self.parse()
        if self.pending?.readableBytes == 0 { self.pending = nil }
        return answer
    }

    /// The connection closed: returns the answer whose body ran until the close, nil when no answer had
    /// started, and throws for an answer cut short.
    mutating func connectionClosed() throws(Malformed) -> HTTP1Answer? {
        if case .untilClose = self.state { return self.finish(reusable: false) }
        guard self.isInsideAnswer else { return nil }
        throw Malformed(reason: "the connection closed inside an answer")
    }

    private mutating func parse() throws(Malformed) -> HTTP1Answer? {
        while true {
            switch self.state {
            case .statusLine, .headerLines:
                guard try self.readHead() else { return nil }
                if let answer = try self.headEnded() { return answer }
            case .fixedBody(let remaining):
                let taken = self.keepBody(upTo: remaining)
                if taken == remaining { return self.finish(reusable: true) }
                self.state = .fixedBody(remaining: remaining - taken)
                return nil
            case .chunkSize:
                guard let line = try self.chunkLine() else { return nil }
                let size = try Self.chunkSize(line)
                self.state = size == 0 ? .trailerLines : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let taken = self.keepBody(upTo: remaining)
                guard taken == remaining else {
                    self.state = .chunkData(remaining: remaining - taken)
                    return nil
                }
                self.state = .chunkDataEnd
            case .chunkDataEnd:
                guard let line = try self.chunkLine() else { return nil }
                guard line.readableBytes == 0 else { throw Malformed(reason: "a chunk is longer than its size") }
                self.state = .chunkSize
            case .trailerLines:
                guard try self.readHead() else { return nil }
                return self.finish(reusable: true)
            case .untilClose:
                _ = self.keepBody(upTo: Int.max)
                return nil
            }
        }
    }

    /// How far ``readHead()`` got.
    private enum HeadProgress {
        case ended
        case needsMore
        case failed(Malformed)
    }

    /// Reads the pending status and header lines (or, after a chunked body, the trailer lines, which are
    /// dropped), all in one pass over the pending bytes (an answer's head usually comes whole in one read);
    /// true once the empty line that ends them was read. Trailers count towards the head's limit.
    private mutating func readHead() throws(Malformed) -> Bool {
        guard var pending = self.pending else { return false }
        self.pending = nil
        let (consumed, progress) = pending.withUnsafeReadableBytes { bytes -> (Int, HeadProgress) in
            var offset = 0
            while let length = UnsafeRawBufferPointer(rebasing: bytes[offset...]).firstIndex(of: UInt8(ascii: "\n")) {
                self.answer.headBytes += length + 1
                if self.answer.headBytes > Self.headLimit { return (offset, .failed(Malformed(reason: "the head is too long"))) }
                var end = offset + length
                if length > 0, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
                offset += length + 1
                switch self.state {
                case .statusLine:
                    // Empty lines before an answer are tolerated, as before a request (RFC 9112 §2.2).
                    if line.isEmpty { continue }
                    if let failure = self.readStatusLine(line) { return (offset, .failed(failure)) }
                    self.state = .headerLines
                case .headerLines:
                    if line.isEmpty { return (offset, .ended) }
                    if let failure = self.readHeaderLine(line) { return (offset, .failed(failure)) }
                default:
                    if line.isEmpty { return (offset, .ended) }
                }
            }
            if self.answer.headBytes + bytes.count - offset > Self.headLimit {
                return (offset, .failed(Malformed(reason: "a line or head is too long")))
            }
            return (offset, .needsMore)
        }
        pending.moveReaderIndex(forwardBy: consumed)
        self.pending = pending
        switch progress {
        case .ended: return true
        case .needsMore: return false
        case .failed(let failure): throw failure
        }
    }

    /// The empty line after the headers: decides how the body is framed. Returns the answer when it has
    /// no body.
    private mutating func headEnded() throws(Malformed) -> HTTP1Answer? {
        let status = self.answer.status
        if status < 200 {
            // 101 Switching Protocols is never asked for; any other 1xx precedes the real answer.
            guard status != 101 else { throw Malformed(reason: "an unrequested protocol switch") }
            self.answer = Answer()
            self.state = .statusLine
            return nil
        }
        if status == 204 || status == 304 { return self.finish(reusable: true) }
        if self.answer.transferCoded {
            // Framing by Transfer-Encoding next to a Content-Length is read as the former, and the
            // connection is not trusted with another request (RFC 9112 §6.3).
            if self.answer.contentLength != nil { self.answer.close = true }
            self.state = self.answer.chunked ? .chunkSize : .untilClose
        } else if let length = self.answer.contentLength {
            if length == 0 { return self.finish(reusable: true) }
            self.state = .fixedBody(remaining: length)
        } else {
            self.state = .untilClose
        }
        return nil
    }

    /// The answer read so far, with the parser ready for the next one.
    private mutating func finish(reusable framed: Bool) -> HTTP1Answer {
        let answer = self.answer
        let keepAlive = answer.isHTTP10 ? answer.keepAlive && !answer.close : !answer.close
        self.answer = Answer()
        self.state = .statusLine
        return HTTP1Answer(status: answer.status, retryAfter: answer.retryAfter, body: answer.body, connectionReusable: framed && keepAlive)
    }

    /// Consumes up to `limit` pending body bytes, keeping what fits in `bodyLimit`; returns how many.
    private mutating func keepBody(upTo limit: Int) -> Int {
        guard var pending = self.pending else { return 0 }
        self.pending = nil
        let taken = min(limit, pending.readableBytes)
        let room = self.bodyLimit - self.answer.body.count
        if room > 0 {
            pending.withUnsafeReadableBytes { self.answer.body.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<min(room, taken)])) }
        }
        pending.moveReaderIndex(forwardBy: taken)
        self.pending = pending
        return taken
    }

    /// The next chunk-size line (or the empty line after a chunk's data) without its line end, or nil
    /// while it is incomplete.
    private mutating func chunkLine() throws(Malformed) -> ByteBuffer? {
        guard var pending = self.pending else { return nil }
        guard let length = pending.withUnsafeReadableBytes({ $0.firstIndex(of: UInt8(ascii: "\n")) }) else {
            if pending.readableBytes > Self.chunkLineLimit { throw Malformed(reason: "a line or head is too long") }
            return nil
        }
        if length + 1 > Self.chunkLineLimit { throw Malformed(reason: "a line is too long") }
        self.pending = nil
        var line = pending.readSlice(length: length)!
        pending.moveReaderIndex(forwardBy: 1)
        self.pending = pending
        if length > 0, line.getInteger(at: line.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\r") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        return line
    }

    /// `HTTP/1.x SP 3DIGIT [SP reason]`; the failure, if it is not.
    private mutating func readStatusLine(_ bytes: UnsafeRawBufferPointer) -> Malformed? {
        guard bytes.count >= 12, bytes.starts(with: "HTTP/1.".utf8) else { return Self.notAStatusLine }
        let minor = bytes[7]
        guard minor == UInt8(ascii: "0") || minor == UInt8(ascii: "1"), bytes[8] == UInt8(ascii: " ") else { return Self.notAStatusLine }
        var status = 0
        for index in 9..<12 {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return Self.notAStatusLine }
            status = status * 10 + Int(digit)
        }
        guard status >= 100, bytes.count == 12 || bytes[12] == UInt8(ascii: " ") else { return Self.notAStatusLine }
        self.answer.status = status
        self.answer.isHTTP10 = minor == UInt8(ascii: "0")
        return nil
    }

    private static let notAStatusLine = Malformed(reason: "not an HTTP/1.0 or 1.1 status line with a three-digit status")

    /// `name: value`; only the headers that frame the body, end the connection or ask for a pause are
    /// read. The failure, if the line is not a header.
    private mutating func readHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Malformed? {
        // A folded continuation line (obsolete) continues a header this parser does not read.
        if bytes[0] == UInt8(ascii: " ") || bytes[0] == UInt8(ascii: "\t") { return nil }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            return Malformed(reason: "a header line without a name")
        }
        let name = UnsafeRawBufferPointer(rebasing: bytes[..<colon])
        guard name.allSatisfy(\.isHTTPTokenByte) else { return Malformed(reason: "a header name that is not a token") }
        let value = Self.trimmed(UnsafeRawBufferPointer(rebasing: bytes[(colon + 1)...]))
        switch name.count {
        case 10 where ASCIICaseFolding.equals(name, "connection"):
            for option in value.split(separator: UInt8(ascii: ",")) {
                let option = Self.trimmed(UnsafeRawBufferPointer(rebasing: option))
                if ASCIICaseFolding.equals(option, "close") { self.answer.close = true }
                if ASCIICaseFolding.equals(option, "keep-alive") { self.answer.keepAlive = true }
            }
        case 11 where ASCIICaseFolding.equals(name, "retry-after"):
            if self.answer.retryAfter == nil { self.answer.retryAfter = String(decoding: value, as: UTF8.self) }
        case 14 where ASCIICaseFolding.equals(name, "content-length"):
            guard let length = Self.contentLength(value) else { return Malformed(reason: "a Content-Length that is not a length") }
            if let known = self.answer.contentLength, known != length { return Malformed(reason: "two different Content-Length values") }
            self.answer.contentLength = length
        case 17 where ASCIICaseFolding.equals(name, "transfer-encoding"):
            self.answer.transferCoded = true
            // The last coding of the last Transfer-Encoding decides.
            let last = value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).last
            self.answer.chunked = last.map { ASCIICaseFolding.equals(Self.trimmed(UnsafeRawBufferPointer(rebasing: $0)), "chunked") } ?? false
        default:
            break
        }
        return nil
    }

    /// Digits only; nil for anything else or more than 18 of them.
    private static func contentLength(_ value: UnsafeRawBufferPointer) -> Int? {
        guard !value.isEmpty, value.count <= 18 else { return nil }
        var length = 0
        for byte in value {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            length = length * 10 + Int(digit)
        }
        return length
    }

    /// A chunk-size line: hexadecimal digits, then optional whitespace and `;` extensions.
    private static func chunkSize(_ line: ByteBuffer) throws(Malformed) -> Int {
        guard let size = line.withUnsafeReadableBytes({ Self.chunkSize($0) }) else {
            throw Malformed(reason: "a chunk size that is not hexadecimal, or too large")
        }
        return size
    }

    private static func chunkSize(_ line: UnsafeRawBufferPointer) -> Int? {
        var size = 0
        var digits = 0
        for byte in line {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte - UInt8(ascii: "A") + 10
            case UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\t"):
                return digits > 0 ? size : nil
            default: return nil
            }
            digits += 1
            guard digits <= 15 else { return nil }
            size = size << 4 | Int(value)
        }
        return digits > 0 ? size : nil
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return UnsafeRawBufferPointer(rebasing: bytes[0..<0])
        }
        return UnsafeRawBufferPointer(rebasing: bytes[first...last])
    }
}
