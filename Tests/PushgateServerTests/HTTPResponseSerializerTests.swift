import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import PushgateServer

/// The bytes a gateway connection writes for an answer's parts.
@Suite("HTTP response serializer")
struct HTTPResponseSerializerTests {
    /// Writes `parts` through a serializer and returns what reached the socket, one string per write.
    static func written(_ parts: [HTTPServerResponsePart]) throws -> [String] {
        let channel = EmbeddedChannel(handler: HTTPResponseSerializer())
        var ended = false
        for part in parts {
            let promise = channel.eventLoop.makePromise(of: Void.self)
            promise.futureResult.assumeIsolated().whenSuccess { if case .end = part { ended = true } }
            channel.writeAndFlush(part, promise: promise)
        }
        var writes: [String] = []
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let bytes) = data else { throw CancellationError() }
            writes.append(String(buffer: bytes))
        }
        #expect(ended)
        _ = try channel.finish()
        return writes
    }

    static func head(_ status: HTTPResponseStatus, _ headers: HTTPHeaders) -> HTTPServerResponsePart {
        .head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))
    }

    @Test func anAnswerIsOneWriteWithItsHeadersInOrder() throws {
        let writes = try Self.written([
            Self.head(.ok, ["Content-Type": "application/json", "Content-Length": "2", "Server": "Pushgate"]),
            .body(.byteBuffer(ByteBuffer(string: "{}"))), .end(nil),
        ])
        #expect(writes == ["HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nServer: Pushgate\r\n\r\n{}"])
    }

    @Test func anAnswerWithoutFramingGetsTheLengthOfItsBody() throws {
        let writes = try Self.written([
            Self.head(.notFound, ["Server": "Pushgate"]), .body(.byteBuffer(ByteBuffer(string: "no "))),
            .body(.byteBuffer(ByteBuffer(string: "such"))), .end(nil),
        ])
        #expect(writes == ["HTTP/1.1 404 Not Found\r\nServer: Pushgate\r\nContent-Length: 7\r\n\r\nno such"])
    }

    @Test func chunkedAnswersAreWrittenAsChunks() throws {
        let writes = try Self.written([
            Self.head(.ok, ["transfer-encoding": "chunked"]), .body(.byteBuffer(ByteBuffer(string: "0123456789abcdefg"))),
            .body(.byteBuffer(ByteBuffer())), .end(nil),
        ])
        #expect(writes == ["HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n11\r\n0123456789abcdefg\r\n0\r\n\r\n"])
    }

    @Test func noContentHasNoBodyAndContinueIsWrittenAtOnce() throws {
        let writes = try Self.written([
            .head(HTTPResponseHead(version: .http1_1, status: .continue)),
            Self.head(.noContent, ["Connection": "close"]), .body(.byteBuffer(ByteBuffer(string: "dropped"))), .end(nil),
        ])
        #expect(writes == ["HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"])
    }

    @Test func anAnswerWithoutItsEndFailsItsWritersWhenTheConnectionCloses() throws {
        let channel = EmbeddedChannel(handler: HTTPResponseSerializer())
        let promise = channel.eventLoop.makePromise(of: Void.self)
        var failed = false
        promise.futureResult.assumeIsolated().whenFailure { _ in failed = true }
        channel.write(Self.head(.ok, ["Content-Length": "2"]), promise: promise)
        _ = try? channel.finish()
        #expect(failed)
    }
}
