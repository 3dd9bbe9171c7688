import NIOCore
import NIOHTTP1

/// Watches the bytes that start each request for input NIO's parser would wait on forever, and tells a
/// malformed method from an unknown one when the parser refuses a method.
///
/// The parser (llhttp) skips any number of empty lines before a request line, and takes an HTTP/0.9
/// request line (`GET /path` and no version) as the start of a request whose headers follow; neither ever
/// becomes a request, and without this check each would hold the connection until the header timeout.
/// RFC 9112 §2.2 asks a server to ignore at least one empty line before a request line: up to four are
/// ignored here (``maxLeadingLineBreakBytes`` bytes of CR and LF), more are refused.
///
/// It only looks at bytes it knows start a request: those of a new connection, or after a read that ended
/// a request with nothing of the next one held back by the parser. A read that completes a request head
/// (nearly every read) costs a look at its first byte; its request line is not scanned. Where the start
/// of a request is not known (a read that ends one request and begins the next), nothing is refused: the
/// check never mistakes part of a request for the start of one.
struct RequestStartCheck {
    /// Why the bytes read can never become a request.
    enum Failure: Error, CustomStringConvertible {
        /// More empty lines before a request line than are ignored.
        case tooManyEmptyLines
        /// A request line without an HTTP version (HTTP/0.9).
        case noHTTPVersion
        /// A request line whose method is not an RFC 9110 token followed by a space (binary bytes, a TLS
        /// ClientHello, a tab as the separator, no method), or one the parser refused where the start of
        /// the request line was not known.
        case malformedMethod

        var description: String {
            switch self {
            case .tooManyEmptyLines: "too many empty lines before the request line"
            case .noHTTPVersion: "request line without an HTTP version"
            case .malformedMethod: "malformed method"
            }
        }
    }

    /// Where the bytes read next stand.
    private enum Position {
        /// At the start of a request, after `lineBreakBytes` bytes of CR and LF.
        case lineBreaks(Int)
        /// In a request line whose start was read; its end not yet.
        case requestLine
        /// Past a request line, in a request, or at a start that is not known: nothing to check.
        case notWatching
    }

    /// The most bytes of CR and LF ignored before a request line: four empty lines.
    static let maxLeadingLineBreakBytes = 8

    private var position = Position.lineBreaks(0)

    /// Checks the empty lines at the front of `bytes`, read next and not yet given to the parser.
    /// - Throws: ``Failure/tooManyEmptyLines`` when they pass the limit.
    mutating func checkLeadingLineBreaks(_ bytes: ByteBuffer) throws {
        guard case .lineBreaks(let seen) = self.position, let first = bytes.readableBytesView.first, Self.isLineBreak(first) else {
            return
        }
        let count = seen + bytes.readableBytesView.prefix { Self.isLineBreak($0) }.count
        if count > Self.maxLeadingLineBreakBytes { throw Failure.tooManyEmptyLines }
        self.position = .lineBreaks(count)
    }

    /// Takes note that the parser read request parts from the last bytes: the next bytes start a request
    /// when every request read has ended (`betweenRequests`) and the parser holds nothing back
    /// (`heldBack`, the bytes it left unread, is 0).
    mutating func partsRead(betweenRequests: Bool, heldBack: Int) {
        self.position = betweenRequests && heldBack == 0 ? .lineBreaks(0) : .notWatching
    }

    /// Checks `bytes`, which the parser read without completing a request part: the start of a request,
    /// and the bytes of it the parser held back from earlier reads.
    /// - Throws: ``Failure/noHTTPVersion`` when they end a request line that has no HTTP version.
    mutating func checkRequestStart(_ bytes: ByteBuffer) throws {
        let view = bytes.readableBytesView
        var lineStart = view.startIndex
        switch self.position {
        case .notWatching:
            return
        case .lineBreaks:
            // Counted before the parser read them.
            guard let first = view.firstIndex(where: { !Self.isLineBreak($0) }) else { return }
            lineStart = first
            self.position = .requestLine
        case .requestLine:
            break
        }
        guard let lineFeed = view[lineStart...].firstIndex(of: UInt8(ascii: "\n")) else { return }
        self.position = .notWatching
        var lineEnd = lineFeed
        if lineEnd > lineStart, view[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
        // The version ends the line: `HTTP/1.1` (or `RTSP/1.0`, which the parser takes too). The parser
        // holds back a request line's bytes from its target on, so they are all here; with fewer than a
        // version's last four, this is not the line's start, and nothing is concluded.
        guard lineEnd - lineStart >= 4 else { return }
        let hasVersion = view[lineEnd - 4] == UInt8(ascii: "/") && Self.isDigit(view[lineEnd - 3])
            && view[lineEnd - 2] == UInt8(ascii: ".") && Self.isDigit(view[lineEnd - 1])
        if !hasVersion { throw Failure.noHTTPVersion }
    }

    /// The error to answer for a method the parser refused, found in `bytes` (the bytes it read when it
    /// refused it, from the last that completed a request part on): the parser's `invalidMethod` (501)
    /// when the method is a token followed by a space, which the server does not implement, else
    /// ``Failure/malformedMethod`` (400). `partsRead` says whether the parser read request parts from
    /// them: then the refused request line starts somewhere after them, and is taken as malformed.
    mutating func refusedMethod(in bytes: ByteBuffer, partsRead: Bool) -> any Error {
        defer { self.position = .notWatching }
        let methodStart: Int
        let startSeen: Bool
        switch self.position {
        case .lineBreaks where !partsRead:
            methodStart = bytes.readableBytesView.prefix { Self.isLineBreak($0) }.count
            startSeen = false
        case .requestLine where !partsRead:
            // The method began in an earlier read, with characters the parser takes in methods.
            methodStart = 0
            startSeen = true
        default:
            return Failure.malformedMethod
        }
        let rest = bytes.readableBytesView.dropFirst(methodStart)
        let token = rest.prefix { Self.isTokenCharacter($0) }
        guard token.count > 0 || startSeen, token.count < rest.count, rest[token.endIndex] == UInt8(ascii: " ") else {
            return Failure.malformedMethod
        }
        return HTTPParserError.invalidMethod
    }

    private static func isLineBreak(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Whether `byte` is an RFC 9110 `tchar`: a letter, a digit or one of ``!#$%&'*+-.^_`|~``.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
