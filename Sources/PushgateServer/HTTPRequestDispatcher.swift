import HummingbirdCore
import NIOCore
import NIOHTTP1

/// Collects each request of a connection whole (head and body, up to its path's limit) and answers it on
/// a task of its own through a ``GatewayResponder``, writing the answer back on the channel's event loop.
///
/// The task runs on the connection's event loop too (``EventLoopTaskExecutor``): reading the request,
/// awaiting the store and the providers (whose connections share the loops) and writing the answer then
/// cost no hand-over between threads, where a task on Swift's shared pool crossed threads four times a
/// request. Routes run their CPU-heavy steps (signature checks, encryption, reading large bodies) through
/// `ComputePool`, on its compute threads, so the loop is not held up by them; child tasks and actors without
/// an executor of their own follow the task onto the loop.
///
/// One request is answered at a time, in order. The parts of requests a pipelining client sends while one
/// is answered are held and taken up, in order, once its answer's end is written; while any are held the
/// connection's reads are held back too, so a client cannot make the gateway hold more than one read's
/// worth. Reads are not held while a request is answered otherwise: a client that waits for its answers
/// (nearly all do) costs no changes of the socket's readiness interest. (NIO's `HTTPServerPipelineHandler`,
/// which this replaces, held them back for every answer: two `epoll_ctl` calls a request.)
///
/// When the server stops gracefully (`ChannelShouldQuiesceEvent`), an idle connection is closed at once
/// and one with a request under way once its answer is written; requests held behind it are dropped.
/// When the client closes its side, the connection is closed at once if nothing is under way, else once
/// what it sent is answered (so it no longer counts against the listener's cap until a timeout).
///
/// A request is answered before its end when its declared `Content-Length` is over the limit (the
/// body-limit middleware answers 413 from the header; a client that asked to wait with
/// `Expect: 100-continue` gets that answer instead of `100 Continue`), when its body grows past the limit
/// (the body is cut one byte past it, and the route answers 413 as it collects it), or when the rest of
/// it cannot be parsed (the route's collecting of the body fails with the parser's error, as it would
/// while streaming). The rest of such a request is dropped, and the connection guard closes the
/// connection after the answer.
final class HTTPRequestDispatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
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

    /// A request part or a parse error, held while an earlier request is answered.
    private enum Held {
        case part(HTTPServerRequestPart)
        case error(any Error)
    }

    private let responder: GatewayResponder
    private let bodyLimits: RequestBodyLimits
    private var state = State.idle
    /// What was read of pipelined requests while an earlier one is answered, oldest first.
    private var held = CircularBuffer<Held>()
    /// A read asked for while parts are held; it is passed on once they are all taken up.
    private var readWithheld = false
    /// Set when the server stops gracefully while a request is under way: the connection closes once
    /// its answer is written.
    private var closeWhenAnswered = false
    /// Set when the client closed its side: the connection closes once nothing it sent is left to answer.
    private var inputClosed = false
    /// Set when the handler leaves the pipeline: an answer that arrives later is not written.
    private var removed = false
    /// Runs the answering tasks on the connection's event loop (that loop's shared executor); looked up
    /// with the first request.
    private var loopExecutor: EventLoopTaskExecutor?

    init(responder: GatewayResponder, bodyLimits: RequestBodyLimits) {
        self.responder = responder
        self.bodyLimits = bodyLimits
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.removed = true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        if self.mustHold {
            self.held.append(.part(part))
        } else {
            self.take(part, context: context)
        }
    }

    /// Whether what is read now belongs to a pipelined request: one is answered and its end was read, or
    /// parts are held already (reads wait while any are, but one read may carry several requests).
    private var mustHold: Bool {
        if case .answering(requestEnded: true) = self.state { return true }
        return !self.held.isEmpty
    }

    /// Passes a read on unless parts are held, or answers wait to be written: a client that sends
    /// requests without reading the answers is read no further until it does (the connection guard
    /// closes a connection that stays unwritable), so the answers waiting stay bounded.
    func read(context: ChannelHandlerContext) {
        if self.held.isEmpty, context.channel.isWritable {
            context.read()
        } else {
            self.readWithheld = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, !self.removed { self.takeUpHeld(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed? = event as? ChannelEvent {
            // The client sends nothing more: close now when nothing is under way, else after the answers.
            self.inputClosed = true
            if case .idle = self.state, self.held.isEmpty { context.close(promise: nil) }
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        self.held.removeAll()
        if case .idle = self.state {
            context.close(promise: nil)
        } else {
            self.closeWhenAnswered = true
        }
    }

    /// Takes up one part of the request being read (or of the one answered early, whose rest is dropped).
    private func take(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            guard case .idle = self.state else {
                // A head while the request before it is read: a broken peer.
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
        if self.mustHold, error is HTTPParserError {
            self.held.append(.error(error))  // in a pipelined request: the answer before it is written first
            return
        }
        self.fail(with: error, context: context)
    }

    private func fail(with error: any Error, context: ChannelHandlerContext) {
        // Parse errors before a head are answered by the connection guard; one within a body reaches the
        // route as the body's error. Anything else ends the connection.
        guard case .collecting(let head, let body, _) = self.state, error is HTTPParserError else {
            context.close(promise: nil)
            return
        }
        self.state = .answering(requestEnded: false)
        self.dispatch(head, body: RequestBody(asyncSequence: FailingRequestBody(received: body, error: error)), context: context)
    }

    /// Answers one request on a new task on the event loop, which writes the answer.
    private func dispatch(_ head: HTTPRequestHead, body: RequestBody, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let responder = self.responder
        let channel = context.channel
        let eventLoop = context.eventLoop
        let executor = self.loopExecutor ?? EventLoopTaskExecutor.executor(for: eventLoop)
        self.loopExecutor = executor
        Task(executorPreference: executor) {
            let answer = await responder.answer(head, body: body, channel: channel)
            let write: @Sendable () -> Void = {
                let (dispatcher, context) = loopBound.value
                dispatcher.write(answer, context: context)
            }
            // Normally the task ends on the loop already; the answer is written at once then.
            if eventLoop.inEventLoop { write() } else { eventLoop.execute(write) }
        }
    }

    private func write(_ answer: GatewayResponder.Answer, context: ChannelHandlerContext) {
        guard !self.removed else { return }
        // The last answer the connection carries: the server is stopping, or the client closed its side
        // and sent nothing more.
        let closing = self.closeWhenAnswered || (self.inputClosed && self.held.isEmpty)
        var head = answer.head
        if closing { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if answer.body.readableBytes > 0 {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        }
        switch self.state {
        case .answering(requestEnded: true): self.state = .idle
        case .answering(requestEnded: false): self.state = .discarding
        default: break
        }
        guard !closing else {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(self.wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
            return
        }
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        self.takeUpHeld(context: context)
    }

    /// Takes up held parts, in order, until one starts an answer (the parts after it wait for that
    /// answer), then passes on a withheld read once none are left. While answers wait to be written
    /// (the channel is not writable) it stops; ``channelWritabilityChanged(context:)`` goes on.
    private func takeUpHeld(context: ChannelHandlerContext) {
        guard context.channel.isWritable else { return }
        while !self.held.isEmpty, !self.removed {
            if case .answering(requestEnded: true) = self.state { return }
            switch self.held.removeFirst() {
            case .part(let part): self.take(part, context: context)
            case .error(let error): self.fail(with: error, context: context)
            }
        }
        if self.readWithheld, !self.removed {
            self.readWithheld = false
            context.read()
        }
    }
}
