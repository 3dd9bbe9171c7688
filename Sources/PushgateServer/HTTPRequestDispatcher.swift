import HummingbirdCore
import NIOCore
import NIOHTTP1

/// Collects each request of a connection whole (head and body, up to its path's limit) and answers it on
/// a task of its own through a ``GatewayResponder``, writing the answer back on the channel's event loop.
///
/// NIO's `HTTPServerPipelineHandler` before it holds back the next request of a pipelining client until
/// the answer's end is written, so one request is answered at a time. A request is answered before its
/// end when its declared `Content-Length` is over the limit (the body-limit middleware answers 413 from
/// the header; a client that asked to wait with `Expect: 100-continue` gets that answer instead of
/// `100 Continue`), when its body grows past the limit (the body is cut one byte past it, and the route
/// answers 413 as it collects it), or when the rest of it cannot be parsed (the route's collecting of
/// the body fails with the parser's error, as it would while streaming). The rest of such a request is
/// dropped, and the connection guard closes the connection after the answer.
final class HTTPRequestDispatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        /// Waiting for a request head.
        case idle
        /// Reading a request's body, of at most `limit` bytes.
        case collecting(HTTPRequestHead, ByteBuffer, limit: Int)
        /// The request is being answered; `requestEnded` once its end was read.
        case answering(requestEnded: Bool)
        /// Answered before the request's end: the rest of it is dropped.
        case discarding
    }

    private let responder: GatewayResponder
    private let bodyLimits: RequestBodyLimits
    private var state = State.idle
    /// Set when the handler leaves the pipeline: an answer that arrives later is not written.
    private var removed = false

    init(responder: GatewayResponder, bodyLimits: RequestBodyLimits) {
        self.responder = responder
        self.bodyLimits = bodyLimits
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.removed = true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            guard case .idle = self.state else {
                // The pipelining handler passes one request at a time; anything else is a broken peer.
                context.close(promise: nil)
                return
            }
            let limit = self.bodyLimits.limit(forTarget: head.uri)
            if let declared = head.headers.first(name: "content-length").flatMap(Int.init), declared > limit {
                self.state = .answering(requestEnded: false)
                self.dispatch(head, body: RequestBody(buffer: context.channel.allocator.buffer(capacity: 0)), context: context)
                return
            }
            self.state = .collecting(head, context.channel.allocator.buffer(capacity: 0), limit: limit)
            if head.version == .http1_1, head.headers.first(name: "expect")?.lowercased() == "100-continue" {
                // The client waits for this before it sends the body (RFC 9110 §10.1.1).
                context.writeAndFlush(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
            }
        case .body(var chunk):
            guard case .collecting(let head, var body, let limit) = self.state else { return }
            self.state = .idle  // the buffer is uniquely held while it grows
            if body.readableBytes + chunk.readableBytes > limit {
                if let slice = chunk.readSlice(length: limit + 1 - body.readableBytes) { body.writeImmutableBuffer(slice) }
                self.state = .answering(requestEnded: false)
                self.dispatch(head, body: RequestBody(buffer: body), context: context)
                return
            }
            if body.readableBytes == 0 {
                body = chunk
            } else {
                body.writeBuffer(&chunk)
            }
            self.state = .collecting(head, body, limit: limit)
        case .end:
            switch self.state {
            case .collecting(let head, let body, _):
                self.state = .answering(requestEnded: true)
                self.dispatch(head, body: RequestBody(buffer: body), context: context)
            case .answering:
                self.state = .answering(requestEnded: true)
            case .discarding:
                self.state = .idle
            case .idle:
                break
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Parse errors before a head are answered by the connection guard; one within a body reaches the
        // route as the body's error. Anything else ends the connection.
        guard case .collecting(let head, let body, _) = self.state, error is HTTPParserError else {
            context.close(promise: nil)
            return
        }
        self.state = .answering(requestEnded: false)
        self.dispatch(head, body: RequestBody(asyncSequence: FailingRequestBody(received: body, error: error)), context: context)
    }

    /// Answers one request on a new task; the answer is written on the event loop.
    private func dispatch(_ head: HTTPRequestHead, body: RequestBody, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let responder = self.responder
        let channel = context.channel
        let eventLoop = context.eventLoop
        Task {
            let answer = await responder.answer(head, body: body, channel: channel)
            eventLoop.execute {
                let (dispatcher, context) = loopBound.value
                dispatcher.write(answer, context: context)
            }
        }
    }

    private func write(_ answer: GatewayResponder.Answer, context: ChannelHandlerContext) {
        guard !self.removed else { return }
        context.write(self.wrapOutboundOut(.head(answer.head)), promise: nil)
        if answer.body.readableBytes > 0 {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        }
        // The state moves on before the end is written: writing it lets the pipelining handler pass on
        // the next request at once, from inside this call.
        switch self.state {
        case .answering(requestEnded: true): self.state = .idle
        case .answering(requestEnded: false): self.state = .discarding
        default: break
        }
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }
}
