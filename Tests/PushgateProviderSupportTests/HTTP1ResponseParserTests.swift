import NIOCore
import Testing

@testable import PushgateProviderSupport

/// Answers as servers frame them, read whole and a byte at a time.
@Suite("HTTP/1 answer parser")
struct HTTP1ResponseParserTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: String
        let status: Int
        let body: String
        let retryAfter: String?
        let reusable: Bool
        /// The body runs until the connection closes.
        var untilClose = false
        var testDescription: String { self.name }
    }

    static let cases: [Case] = [
        Case(
            name: "Content-Length", bytes: "HTTP/1.1 201 Created\r\nLocation: /m/1\r\nContent-Length: 5\r\n\r\nhello", status: 201,
            body: "hello", retryAfter: nil, reusable: true),
        Case(
            name: "chunked, with an extension and a trailer",
            bytes: "HTTP/1.1 429 Too Many Requests\r\nTransfer-Encoding: gzip, chunked\r\nretry-after:  30 \r\n\r\n"
                + "4;name=value\r\nWiki\r\n5\r\npedia\r\nA \r\n in\r\nchunk\r\n0\r\nX-Trailer: yes\r\n\r\n",
            status: 429, body: "Wikipedia in\r\nchunk", retryAfter: "30", reusable: true),
        Case(
            name: "100 Continue, then the answer",
            bytes: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            status: 200, body: "ok", retryAfter: nil, reusable: true),
        Case(name: "204 without a body", bytes: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, body: "", retryAfter: nil, reusable: true),
        Case(
            name: "304 ignores Content-Length", bytes: "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", status: 304, body: "",
            retryAfter: nil, reusable: true),
        Case(
            name: "Connection: close", bytes: "HTTP/1.1 410 Gone\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n",
            status: 410, body: "", retryAfter: nil, reusable: false),
        Case(
            name: "HTTP/1.0 closes by default", bytes: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x",
            retryAfter: nil, reusable: false),
        Case(
            name: "HTTP/1.0 keep-alive", bytes: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", status: 200,
            body: "x", retryAfter: nil, reusable: true),
        Case(
            name: "bare LF line ends, no reason phrase", bytes: "HTTP/1.1 404\nContent-Length: 3\n\nnot", status: 404, body: "not",
            retryAfter: nil, reusable: true),
        Case(
            name: "Transfer-Encoding wins over Content-Length, and the connection is not reused",
            bytes: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n", status: 200,
            body: "ab", retryAfter: nil, reusable: false),
        Case(
            name: "the body kept stops at the limit", bytes: "HTTP/1.1 400 Bad Request\r\nContent-Length: 20\r\n\r\n0123456789abcdefghij",
            status: 400, body: "0123456789abcdef", retryAfter: nil, reusable: true),
        Case(
            name: "a folded line and repeated identical lengths",
            bytes: "HTTP/1.1 200 OK\r\nX-Long: a\r\n  b\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok",
            retryAfter: nil, reusable: true),
        Case(
            name: "no length: the body runs until the close", bytes: "HTTP/1.1 500 Internal Server Error\r\n\r\nsorry", status: 500,
            body: "sorry", retryAfter: nil, reusable: false, untilClose: true),
        Case(
            name: "a transfer coding that is not chunked runs until the close",
            bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nzzz", status: 200, body: "zzz", retryAfter: nil,
            reusable: false, untilClose: true),
    ]

    /// Feeds `chunks`, then the close when asked, and returns every answer read.
    static func answers(_ chunks: [[UInt8]], close: Bool) throws -> [HTTP1Answer] {
        var parser = HTTP1ResponseParser(bodyLimit: 16)
        var answers: [HTTP1Answer] = []
        for chunk in chunks {
            if let answer = try parser.read(ByteBuffer(bytes: chunk)) { answers.append(answer) }
        }
        if close, let answer = try parser.connectionClosed() { answers.append(answer) }
        return answers
    }

    @Test(arguments: cases)
    func readsTheAnswerWholeAndByteByByte(_ example: Case) throws {
        let bytes = Array(example.bytes.utf8)
        for chunks in [[bytes], bytes.map { [$0] }] {
            let answers = try Self.answers(chunks, close: example.untilClose)
            try #require(answers.count == 1)
            let answer = answers[0]
            #expect(answer.status == example.status)
            #expect(answer.body == Array(example.body.utf8.prefix(16)))
            #expect(answer.retryAfter == example.retryAfter)
            #expect(answer.connectionReusable == example.reusable)
        }
    }

    @Test func aBodyThatRunsUntilTheCloseIsNotAnsweredBeforeIt() throws {
        #expect(try Self.answers([Array("HTTP/1.1 200 OK\r\n\r\nsome".utf8)], close: false).isEmpty)
    }

    @Test func twoAnswersOneAfterTheOtherAreBothRead() throws {
        let first = "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nlonger than sixteen."
        let second = "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n"
        var parser = HTTP1ResponseParser(bodyLimit: 16)
        let one = try parser.read(ByteBuffer(string: first))
        #expect(one?.status == 200)
        #expect(!parser.hasUnparsedBytes)
        let two = try parser.read(ByteBuffer(string: second))
        #expect(two?.status == 201)
        #expect(two?.body == Array("z".utf8))
        #expect(try parser.connectionClosed() == nil)
    }

    @Test func bytesAfterAnAnswerStayUnparsed() throws {
        var parser = HTTP1ResponseParser(bodyLimit: 16)
        let answer = try parser.read(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 408"))
        #expect(answer?.status == 200)
        #expect(parser.hasUnparsedBytes)
    }

    static let malformed: [(String, String)] = [
        ("not HTTP", "SSH-2.0-OpenSSH_9.2\r\n\r\n"),
        ("HTTP/2 status line", "HTTP/2 200\r\n\r\n"),
        ("a status of two digits", "HTTP/1.1 20 OK\r\n\r\n"),
        ("a status with letters", "HTTP/1.1 2x0 OK\r\n\r\n"),
        ("a status glued to its reason", "HTTP/1.1 200OK\r\n\r\n"),
        ("a protocol switch", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"),
        ("a header without a colon", "HTTP/1.1 200 OK\r\nContent-Length 5\r\n\r\nhello"),
        ("space before the colon", "HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello"),
        ("a negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
        ("a length list", "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello"),
        ("an absurd length", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n"),
        ("two different lengths", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
        ("a chunk size that is not hexadecimal", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        ("an empty chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n;x\r\n"),
        ("a chunk size that overflows", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n"),
        ("a chunk longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n"),
    ]

    @Test(arguments: malformed)
    func malformedAnswersAreRefused(_ name: String, _ text: String) {
        #expect(throws: HTTP1ResponseParser.Malformed.self, "\(name)") { _ = try Self.answers([Array(text.utf8)], close: false) }
    }

    @Test func aHeadLargerThanTheLimitIsRefusedBeforeItEnds() {
        var parser = HTTP1ResponseParser(bodyLimit: 16)
        let filler = ByteBuffer(string: "X-Filler: " + String(repeating: "a", count: 1000) + "\r\n")
        #expect(throws: HTTP1ResponseParser.Malformed.self) {
            _ = try parser.read(ByteBuffer(string: "HTTP/1.1 200 OK\r\n"))
            for _ in 0..<70 { _ = try parser.read(filler) }
        }
        var endless = HTTP1ResponseParser(bodyLimit: 16)
        #expect(throws: HTTP1ResponseParser.Malformed.self) {
            for _ in 0..<70 { _ = try endless.read(ByteBuffer(string: String(repeating: "a", count: 1000))) }
        }
    }

    @Test func anAnswerCutShortByTheCloseIsAnError() throws {
        for text in ["HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", "HTTP/1.1 200"] {
            var parser = HTTP1ResponseParser(bodyLimit: 16)
            #expect(try parser.read(ByteBuffer(string: text)) == nil)
            #expect(throws: HTTP1ResponseParser.Malformed.self) { _ = try parser.connectionClosed() }
        }
    }
}
