import NIOCore
import NIOHTTP1
import Testing

@testable import PushgateProviderSupport

/// The bytes of a request as a pool's connection writes them.
@Suite("HTTP/1 request serializer")
struct HTTP1RequestSerializerTests {
    static func head(_ headers: [(String, String)], uri: String = "/v1/projects/p/messages:send?x=1") -> HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: .POST, uri: uri, headers: HTTPHeaders(headers))
    }

    @Test func writesTheRequestLineTheHeadersInOrderAndTheBody() throws {
        let head = Self.head([("Host", "push.example:8443"), ("Authorization", "Bearer a.b-c_d"), ("TTL", "60"), ("Content-Length", "4")])
        let bytes = try HTTP1RequestSerializer.serialize(head, body: ByteBuffer(string: "body"), allocator: ByteBufferAllocator())
        let expected =
            "POST /v1/projects/p/messages:send?x=1 HTTP/1.1\r\nHost: push.example:8443\r\nAuthorization: Bearer a.b-c_d\r\nTTL: 60\r\n"
            + "Content-Length: 4\r\n\r\nbody"
        #expect(String(buffer: bytes) == expected)
    }

    @Test func aGetWithoutABodyEndsAfterTheHead() throws {
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/relay/v1/messages/%2Fwaku", headers: ["Host": "127.0.0.1"])
        let bytes = try HTTP1RequestSerializer.serialize(head, body: ByteBuffer(), allocator: ByteBufferAllocator())
        #expect(String(buffer: bytes) == "GET /relay/v1/messages/%2Fwaku HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    }

    static let refused: [(String, HTTPRequestHead)] = [
        ("a line break in a value", head([("Authorization", "Bearer x\r\nX-Injected: 1")])),
        ("a bare LF in a value", head([("Topic", "a\nb")])),
        ("a NUL in a value", head([("Topic", "a\u{0}b")])),
        ("a space in a name", head([("Bad Name", "v")])),
        ("a colon in a name", head([("Bad:Name", "v")])),
        ("an empty name", head([("", "v")])),
        ("a space in the target", head([], uri: "/a b")),
        ("an empty target", head([], uri: "")),
    ]

    @Test(arguments: refused)
    func requestsThatWouldChangeMeaningAreNotWritten(_ name: String, _ head: HTTPRequestHead) {
        #expect(throws: HTTP1RequestSerializer.Invalid.self, "\(name)") {
            _ = try HTTP1RequestSerializer.serialize(head, body: ByteBuffer(), allocator: ByteBufferAllocator())
        }
    }

    @Test func theErrorNamesTheHeaderButNotItsValue() {
        do {
            _ = try HTTP1RequestSerializer.serialize(Self.head([("Authorization", "Bearer secret\r\n")]), body: ByteBuffer(), allocator: ByteBufferAllocator())
            Issue.record("written")
        } catch {
            #expect(error.description.contains("Authorization"))
            #expect(!error.description.contains("secret"))
        }
    }
}
