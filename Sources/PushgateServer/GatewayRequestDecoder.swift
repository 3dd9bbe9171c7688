import NIOCore
import NIOHTTP1

/// NIO's request decoder with a ``RequestStartCheck`` on the bytes that start each request: it refuses
/// input that can never become a request (too many empty lines before a request line, an HTTP/0.9 request
/// line) at once, where NIO's parser would wait for more until the header timeout, and it answers a method
/// the parser refuses with `HTTPParserError.invalidMethod` only when the method is a well-formed token
/// (501), with ``RequestStartCheck/Failure/malformedMethod`` (400) otherwise.
///
/// It learns whether the parser read request parts from a read, and whether every request read has ended,
/// from the connection's ``HTTPConnectionGuard``, which sees each part right after it. A read that
/// completes a request head costs a look at its first byte and at the guard's state.
final class GatewayRequestDecoder: ByteToMessageDecoder {
    typealias InboundOut = HTTPServerRequestPart

    private let parser: HTTPRequestDecoder
    private let connectionGuard: HTTPConnectionGuard
    private var check = RequestStartCheck()

    init(connectionGuard: HTTPConnectionGuard) {
        self.parser = HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)
        self.connectionGuard = connectionGuard
    }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        try self.check.checkLeadingLineBreaks(buffer)
        let start = buffer.readerIndex
        let state: DecodingState
        do {
            state = try self.parser.decode(context: context, buffer: &buffer)
        } catch HTTPParserError.invalidMethod {
            // The parser left the buffer as it was given.
            throw self.check.refusedMethod(in: buffer, partsRead: self.connectionGuard.takePartsRead())
        }
        if self.connectionGuard.takePartsRead() {
            self.check.partsRead(betweenRequests: self.connectionGuard.betweenRequests, heldBack: buffer.readableBytes)
        } else {
            // Nothing of a request completed: these bytes, with any the parser held back, start one.
            var read = buffer
            read.moveReaderIndex(to: start)
            try self.check.checkRequestStart(read)
        }
        return state
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try self.parser.decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
    }

    func decoderAdded(context: ChannelHandlerContext) {
        self.parser.decoderAdded(context: context)
    }

    func decoderRemoved(context: ChannelHandlerContext) {
        self.parser.decoderRemoved(context: context)
    }
}
