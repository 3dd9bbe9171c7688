import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import PushgateProviderSupport

/// The bytes of a request as a pool's connection writes them.
@Suite("HTTP/1 request serializer")
struct HTTP1RequestSerializerTests {
    static func destination(_ url: String) throws -> HTTP1ConnectionPool.Destination {
        let parsed = try #require(URL(string: url))
        return try #require(HTTP1ConnectionPool.Destination(parsed))
    }

    static func lines(_ fields: [(String, String)]) throws(HTTP1ExchangeError) -> HTTP1HeaderLines {
        try HTTP1HeaderLines(fields.map { (name: $0.0, value: $0.1) })
    }

    @Test func writesTheRequestLineHostTheHeadersInOrderTheLengthAndTheBody() throws {
        let headers = try Self.lines([("Authorization", "Bearer a.b-c_d"), ("TTL", "60")])
        let destination = try Self.destination("https://push.example:8443/v1/projects/p/messages:send?x=1")
        let bytes = try #require(
            HTTP1RequestSerializer.serialize(.POST, to: destination, headers: headers, body: ByteBuffer(string: "body"), allocator: ByteBufferAllocator())
        )
        let expected =
            "POST /v1/projects/p/messages:send?x=1 HTTP/1.1\r\nHost: push.example:8443\r\nAuthorization: Bearer a.b-c_d\r\nTTL: 60\r\n"
            + "Content-Length: 4\r\n\r\nbody"
        #expect(String(buffer: bytes) == expected)
    }

    @Test func aGetWithoutABodySaysLengthZero() throws {
        let destination = try Self.destination("http://127.0.0.1/relay/v1/messages/%2Fwaku")
        let bytes = try #require(
            HTTP1RequestSerializer.serialize(.GET, to: destination, headers: HTTP1HeaderLines(), body: ByteBuffer(), allocator: ByteBufferAllocator())
        )
        #expect(String(buffer: bytes) == "GET /relay/v1/messages/%2Fwaku HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
    }

    @Test(arguments: [0, 9, 10, 99, 100, 12_345, 1_000_000])
    func theLengthIsTheBodysDecimalByteCount(_ count: Int) throws {
        let destination = try Self.destination("http://push.example/")
        let body = ByteBuffer(repeating: UInt8(ascii: "x"), count: count)
        let bytes = try #require(HTTP1RequestSerializer.serialize(.POST, to: destination, headers: HTTP1HeaderLines(), body: body, allocator: ByteBufferAllocator()))
        let text = String(buffer: bytes)
        #expect(text.hasPrefix("POST / HTTP/1.1\r\nHost: push.example\r\nContent-Length: \(count)\r\n\r\n"))
        #expect(bytes.readableBytes == "POST / HTTP/1.1\r\nHost: push.example\r\nContent-Length: \(count)\r\n\r\n".utf8.count + count)
    }

    @Test func hostAndContentLengthAreThePoolsToWrite() throws {
        let headers = try Self.lines([("host", "evil.example"), ("Content-Length", "99"), ("TTL", "60"), ("CONTENT-LENGTH", "1")])
        #expect(String(decoding: headers.bytes, as: UTF8.self) == "TTL: 60\r\n")
    }

    static let refusedHeaders: [(String, (String, String))] = [
        ("a line break in a value", ("Authorization", "Bearer x\r\nX-Injected: 1")),
        ("a bare LF in a value", ("Topic", "a\nb")),
        ("a NUL in a value", ("Topic", "a\u{0}b")),
        ("a space in a name", ("Bad Name", "v")),
        ("a colon in a name", ("Bad:Name", "v")),
        ("an empty name", ("", "v")),
        ("a line break in the value of a pool's header", ("Host", "a\r\nX-Injected: 1")),
    ]

    @Test(arguments: refusedHeaders)
    func headersThatWouldChangeMeaningAreRefused(_ name: String, _ field: (String, String)) {
        #expect(throws: HTTP1ExchangeError.self, "\(name)") { _ = try Self.lines([field]) }
        var lines = HTTP1HeaderLines()
        #expect(throws: HTTP1ExchangeError.self, "\(name)") { try lines.append(name: field.0, value: field.1) }
        #expect(lines.bytes.isEmpty)
    }

    @Test func aTargetThatWouldChangeMeaningIsNotWritten() throws {
        #expect(HTTP1RequestSerializer.afterMethod(target: "/a b", host: "push.example") == nil)
        #expect(HTTP1RequestSerializer.afterMethod(target: "/a\u{7F}", host: "push.example") == nil)
        #expect(HTTP1RequestSerializer.afterMethod(target: "", host: "push.example") == nil)
        #expect(HTTP1RequestSerializer.afterMethod(target: "/a", host: "push.example\r\nX: 1") == nil)
        #expect(HTTP1RequestSerializer.afterMethod(target: "/a", host: "push.example") == Array(" /a HTTP/1.1\r\nHost: push.example\r\n".utf8))
    }

    @Test func theErrorNamesTheHeaderButNotItsValue() {
        do throws(HTTP1ExchangeError) {
            _ = try Self.lines([("Authorization", "Bearer secret\r\n")])
            Issue.record("taken")
        } catch {
            #expect(error.description.contains("Authorization"))
            #expect(!error.description.contains("secret"))
        }
    }

    @Test func bearerLinesFollowTheAccessToken() throws {
        let bearer = BearerHeaderLines(fixed: HTTP1HeaderLines(constant: [("Content-Type", "application/json")]))
        #expect(String(decoding: try bearer.lines(for: "one").bytes, as: UTF8.self) == "Content-Type: application/json\r\nAuthorization: Bearer one\r\n")
        #expect(String(decoding: try bearer.lines(for: "one").bytes, as: UTF8.self) == "Content-Type: application/json\r\nAuthorization: Bearer one\r\n")
        #expect(String(decoding: try bearer.lines(for: "two").bytes, as: UTF8.self) == "Content-Type: application/json\r\nAuthorization: Bearer two\r\n")
        #expect(throws: HTTP1ExchangeError.self) { try bearer.lines(for: "three\r\nX-Injected: 1") }
        #expect(String(decoding: try bearer.lines(for: "two").bytes, as: UTF8.self) == "Content-Type: application/json\r\nAuthorization: Bearer two\r\n")
    }
}
