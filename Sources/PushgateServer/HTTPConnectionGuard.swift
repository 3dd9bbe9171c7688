import Logging
import NIOCore
import NIOHTTP1
import HTTPTypes
import PushgateHTTP

/// Guards one HTTP/1 connection against slow, hostile or malformed clients, below the framework: it
/// sits right after the request decoder, so it sees every request head, body and end, every response, and
/// every parse error.
///
/// - A connection over the listener's cap is answered 503 and closed.
/// - The first request head must arrive within the header timeout, each body within the body timeout,
///   and the next head on a kept-alive connection within the idle timeout; otherwise the connection is
///   closed (408 if a body was under way).
/// - A request that is not kept alive (HTTP/1.0 without `keep-alive`, or `Connection: close`), or that
///   is answered before its body was read, gets `Connection: close` on its response and the connection
///   is closed after it.
/// - `CONNECT` is answered 405 and the connection closed: nothing here tunnels.
/// - A request that cannot be parsed before its head is complete is answered 400 (501 for a well-formed
///   method the server does not implement) and the connection closed; requests a pipelining client sent
///   before it are answered first, in order. Errors once a request is under way reach its handler, which
///   answers in its protocol's shape. Neither is logged above debug level: clients cannot fill the log.
///
/// It also tells the connection's ``GatewayRequestDecoder`` whether request parts were read since it last
/// asked, and whether every request read has ended, so the decoder knows which bytes start a request.
final class HTTPConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The timeouts and the cap a listener applies.
    struct Limits: Sendable {
        var headerTimeout: TimeAmount
        var bodyTimeout: TimeAmount
        var idleTimeout: TimeAmount
    }

    private enum State {
        /// Waiting for a request head: the first one, or the next on a kept-alive connection.
        case waitingForHead(first: Bool)
        /// A head arrived; its body is being read.
        case readingBody
        /// The request is complete; the handler is answering.
        case answering
        /// An answer of this guard's own is being written; everything else is dropped.
        case closing
    }

    private let limits: Limits
    private let connections: OpenConnections
    private let logger: Logger
    private var state = State.waitingForHead(first: true)
    /// When the current wait ends; nil while nothing is awaited (the handler is answering).
    private var deadline: NIODeadline?
    /// The one scheduled check, and when it runs. Moving the deadline later leaves it in place: when it
    /// runs early it schedules itself again for the deadline. So a kept-alive connection schedules about
    /// one check per timeout period instead of two timers (a task, a promise and a heap entry each) for
    /// every request.
    private var timer: Scheduled<Void>?
    private var timerRunsAt: NIODeadline?
    /// Closes the connection when it stays unwritable (answers the client does not read) for the idle
    /// timeout; set while it is unwritable.
    private var stallTimer: Scheduled<Void>?
    private var closeAfterResponse = false
    private var counted = false
    /// Requests a pipelining client sent while an earlier one was still being answered (the dispatcher
    /// above holds them back), oldest first: whether each is kept alive and whether its end was
    /// read. Each becomes the current request when the answer before it ends.
    private var pipelined: [(keepAlive: Bool, ended: Bool)] = []
    /// A request that could not be parsed, read after requests still to be answered: it is answered once
    /// they are, and the connection closed.
    private var unparsableAfterAnswers: (any Error)?
    /// Whether a request part was read since ``takePartsRead()`` was last called.
    private var partsRead = false

    init(limits: Limits, connections: OpenConnections, logger: Logger) {
        self.limits = limits
        self.connections = connections
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.connectionOpened(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.connectionOpened(context)
        context.fireChannelActive()
    }

    /// Counts the connection in (or refuses it) and starts waiting for its first request head.
    private func connectionOpened(_ context: ChannelHandlerContext) {
        guard !self.counted, case .waitingForHead(first: true) = self.state, self.deadline == nil else { return }
        guard self.connections.open() else {
            self.logger.debug("http: connection refused, the listener is at its cap", metadata: ["max_connections": "\(self.connections.limit)"])
            self.answerAndClose(context, status: .serviceUnavailable, errcode: "M_UNKNOWN", message: "Too many connections; try again later")
            return
        }
        self.counted = true
        self.startTimer(context, self.limits.headerTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.deadline = nil
        self.timer?.cancel()
        self.timer = nil
        self.timerRunsAt = nil
        self.stallTimer?.cancel()
        self.stallTimer = nil
        if self.counted {
            self.counted = false
            self.connections.close()
        }
    }

    /// Whether a request part was read since the last call; the decoder asks after each read.
    func takePartsRead() -> Bool {
        defer { self.partsRead = false }
        return self.partsRead
    }

    /// Whether every request read so far has ended, so the next bytes read start a new request.
    var betweenRequests: Bool {
        switch self.state {
        case .waitingForHead: true
        case .answering: self.pipelined.last?.ended ?? true
        case .readingBody, .closing: false
        }
    }

    /// A client that does not read its answers leaves them waiting to be written: once the connection has
    /// been unwritable for the idle timeout it is closed, and what waits is dropped.
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            self.stallTimer?.cancel()
            self.stallTimer = nil
        } else if self.stallTimer == nil {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            self.stallTimer = context.eventLoop.scheduleTask(in: self.limits.idleTimeout) {
                let (guardHandler, context) = loopBound.value
                guardHandler.stallTimer = nil
                guard !context.channel.isWritable else { return }
                guardHandler.logger.debug("http: the client does not read its answers, closing")
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = self.unwrapInboundIn(data)
        self.partsRead = true
        if case .answering = self.state {
            // A pipelined request, read while the one before it is answered.
            switch part {
            case .head(let head): self.pipelined.append((keepAlive: head.isKeepAlive, ended: false))
            case .body: break
            case .end: if !self.pipelined.isEmpty { self.pipelined[self.pipelined.count - 1].ended = true }
            }
            context.fireChannelRead(data)
            return
        }
        switch (self.state, part) {
        case (.closing, _):
            return
        case (_, .head(let head)):
            self.cancelTimer()
            if head.method == .CONNECT {
                self.answerAndClose(context, status: .methodNotAllowed, errcode: "M_UNRECOGNIZED", message: "CONNECT is not supported")
                return
            }
            self.closeAfterResponse = !head.isKeepAlive
            self.state = .readingBody
            self.startTimer(context, self.limits.bodyTimeout)
        case (_, .end):
            self.cancelTimer()
            self.state = .answering
        case (_, .body):
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = self.unwrapOutboundIn(data)
        if case .end = part, case .readingBody = self.state {
            // Answered before the body was read (413, say): the rest of the body is not read, so the
            // connection cannot carry another request.
            self.closeAfterResponse = true
            self.cancelTimer()
        }
        if self.unparsableAfterAnswers != nil, case .head(let head) = part, head.headers[canonicalForm: "connection"].contains("close") {
            self.unparsableAfterAnswers = nil  // the connection ends with this answer, for a reason of its own
        }
        guard self.closeAfterResponse else {
            if case .end = part, case .answering = self.state {
                if self.pipelined.isEmpty, let error = self.unparsableAfterAnswers {
                    // The last answer owed before a request that could not be parsed.
                    context.write(data, promise: promise)
                    self.answerUnparsable(context, error)
                    return
                }
                if self.pipelined.isEmpty {
                    self.state = .waitingForHead(first: false)
                    self.startTimer(context, self.limits.idleTimeout)
                } else {
                    let next = self.pipelined.removeFirst()
                    self.closeAfterResponse = !next.keepAlive
                    if !next.ended {
                        self.state = .readingBody
                        self.startTimer(context, self.limits.bodyTimeout)
                    }
                }
            }
            context.write(data, promise: promise)
            return
        }
        switch part {
        case .head(let head) where head.status.code < 200:
            context.write(data, promise: promise)  // `100 Continue`: the final answer says close
        case .head(var head):
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            context.write(self.wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            // Closed once written, or after the idle timeout if the client does not read it.
            self.state = .closing
            self.startTimer(context, self.limits.idleTimeout)
            let written = promise ?? context.eventLoop.makePromise()
            context.write(data, promise: written)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case ByteToMessageDecoderError.dataReceivedInErrorState = error {
            return  // bytes after a request that could not be parsed: it is answered, or its request's handler answers
        }
        guard error is HTTPParserError || error is RequestStartCheck.Failure else {
            context.fireErrorCaught(error)
            return
        }
        switch self.state {
        case .waitingForHead:
            self.answerUnparsable(context, error)
        case .answering where self.pipelined.last?.ended ?? true:
            // Between pipelined requests: those read before it are answered first.
            if self.unparsableAfterAnswers == nil { self.unparsableAfterAnswers = error }
        case .closing:
            break
        case .readingBody, .answering:
            context.fireErrorCaught(error)  // within a request: its handler answers
        }
    }

    /// Answers a request that could not be parsed before its head was complete, and closes the connection.
    private func answerUnparsable(_ context: ChannelHandlerContext, _ error: any Error) {
        self.logger.debug("http: unparsable request", metadata: ["error": "\(error)"])
        if case HTTPParserError.invalidMethod = error {
            self.answerAndClose(context, status: .notImplemented, errcode: "M_UNRECOGNIZED", message: "Unknown method")
        } else {
            self.answerAndClose(context, status: .badRequest, errcode: "M_UNRECOGNIZED", message: "Malformed HTTP request")
        }
    }

    /// Writes an answer of the guard's own (a Matrix-shaped JSON error) and closes the connection.
    private func answerAndClose(_ context: ChannelHandlerContext, status: HTTPResponseStatus, errcode: String, message: String) {
        self.cancelTimer()
        self.state = .closing
        let body = GatewayErrorBody(status: .init(code: Int(status.code)), errcode: errcode, message: message).json
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Server", value: "Pushgate")
        context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        // Closed once written, or after the idle timeout if the client does not read it.
        self.startTimer(context, self.limits.idleTimeout)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(self.wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    /// Starts waiting `timeout` from now, replacing any earlier wait.
    private func startTimer(_ context: ChannelHandlerContext, _ timeout: TimeAmount) {
        let deadline = NIODeadline.now() + timeout
        self.deadline = deadline
        if let runsAt = self.timerRunsAt, runsAt <= deadline { return }
        self.schedule(context, at: deadline)
    }

    /// Stops waiting; a check already scheduled finds nothing to do.
    private func cancelTimer() {
        self.deadline = nil
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        self.timer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.timerRunsAt = deadline
        self.timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (guardHandler, context) = loopBound.value
            guardHandler.timerRan(context)
        }
    }

    private func timerRan(_ context: ChannelHandlerContext) {
        self.timer = nil
        self.timerRunsAt = nil
        guard let deadline = self.deadline else { return }
        if deadline > .now() {
            self.schedule(context, at: deadline)
            return
        }
        self.deadline = nil
        self.timedOut(context)
    }

    private func timedOut(_ context: ChannelHandlerContext) {
        switch self.state {
        case .waitingForHead(let first):
            self.logger.debug(first ? "http: no request head in time, closing" : "http: idle connection closed")
            context.close(promise: nil)
        case .readingBody:
            self.logger.debug("http: request body not complete in time, closing")
            self.answerAndClose(context, status: .requestTimeout, errcode: "M_UNKNOWN", message: "The request body did not arrive in time")
        case .closing:
            self.logger.debug("http: the last answer was not taken in time, closing")
            context.close(promise: nil)
        case .answering:
            break
        }
    }
}
