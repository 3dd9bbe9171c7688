import NIOCore
import NIOHTTP1

/// Collects each HTTP/1 request (head and body, up to ``maxBodySize``) and hands it, ended, to
/// ``answer(_:body:bodyTooLarge:context:)``, which an emulator overrides and which answers through
/// ``respond(status:headers:body:request:keepAlive:context:)``. Answers written while reading are flushed
/// once per read.
class SandboxHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The largest request body read; a larger one is dropped and the request answered with
    /// `bodyTooLarge` set.
    let maxBodySize: Int
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var bodyTooLarge = false
    private var needsFlush = false

    init(maxBodySize: Int) {
        self.maxBodySize = maxBodySize
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            self.body = nil
            self.bodyTooLarge = false
        case .body(var bytes):
            guard !self.bodyTooLarge else { return }
            if (self.body?.readableBytes ?? 0) + bytes.readableBytes > self.maxBodySize {
                self.bodyTooLarge = true
                self.body = nil
            } else if self.body == nil {
                self.body = bytes
            } else {
                self.body!.writeBuffer(&bytes)
            }
        case .end:
            guard let head = self.head else { return }
            self.head = nil
            let body = self.body
            let tooLarge = self.bodyTooLarge
            self.body = nil
            self.bodyTooLarge = false
            self.answer(head, body: body, bodyTooLarge: tooLarge, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if self.needsFlush {
            self.needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Malformed HTTP was answered 400 by NIO's error handler; anything else ends the connection.
        context.close(promise: nil)
    }

    /// Answers one ended request; an emulator overrides it.
    func answer(_ request: HTTPRequestHead, body: ByteBuffer?, bodyTooLarge: Bool, context: ChannelHandlerContext) {
        self.respond(status: 404, request: request, keepAlive: request.isKeepAlive, context: context)
    }

    /// Writes an answer (head, body unless the request was HEAD, end); closes the connection after it
    /// unless kept alive. An answer written outside a read (a delayed one) passes `flushNow`.
    func respond(
        status: Int, headers extra: [(String, String)] = [], body: [UInt8] = [], request: HTTPRequestHead, keepAlive: Bool,
        flushNow: Bool = false, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders(extra)
        headers.add(name: "content-length", value: String(body.count))
        if !keepAlive { headers.add(name: "connection", value: "close") }
        let head = HTTPResponseHead(version: request.version, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty, request.method != .HEAD {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        if keepAlive, !flushNow {
            context.write(self.wrapOutboundOut(.end(nil)), promise: nil)
            self.needsFlush = true
        } else if keepAlive {
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(self.wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in channel.close(promise: nil) }
            self.needsFlush = false
        }
    }
}
