import NIOCore
import NIOHTTP1

/// One HTTP/1.1 connection of an ``HTTP1ConnectionPool``, one request at a time: writes the request, collects the
/// answer's status, `Retry-After` and the start of its body, and says whether the connection may carry
/// another request. Runs on the channel's event loop.
final class HTTP1ExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// The most bytes of an answer's body kept (push services' error texts are short).
    let bodyLimit: Int

    init(bodyLimit: Int) {
        self.bodyLimit = bodyLimit
    }

    private struct Exchange {
        var promise: EventLoopPromise<HTTP1Answer>
        var timeout: NIOScheduledCallback?
        var status: Int?
        var retryAfter: String?
        var keepAlive = true
        var body: [UInt8] = []
    }

    private var context: ChannelHandlerContext?
    private var exchange: Exchange?
    private var failure: String?
    /// Whether the connection may take another request (set false once the server or an error ends it).
    private(set) var isReusable = true

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.finish(.failure(HTTP1ExchangeError.connectionLost("handler removed")))
    }

    /// Sends one request; `promise` gets the answer or a ``HTTP1ExchangeError``.
    func send(head: HTTPRequestHead, body: ByteBuffer, deadline: NIODeadline, promise: EventLoopPromise<HTTP1Answer>) {
        guard let context = self.context, self.isReusable, self.exchange == nil, context.channel.isActive else {
            promise.fail(HTTP1ExchangeError.notSent)
            return
        }
        // A callback rather than a scheduled task: no promise and future to make and fail for each request.
        let timeout: NIOScheduledCallback
        do {
            timeout = try context.eventLoop.assumeIsolated().scheduleCallback(at: deadline, handler: DeadlineCallback(handler: self))
        } catch {
            // The event loop is shutting down: nothing could bound the wait, so nothing is sent.
            promise.fail(HTTP1ExchangeError.shutDown)
            return
        }
        self.exchange = Exchange(promise: promise, timeout: timeout)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            // An informational answer (100 Continue) comes before the real one.
            guard head.status.code >= 200 else { return }
            self.exchange?.status = Int(head.status.code)
            self.exchange?.retryAfter = head.headers.first(name: "Retry-After")
            self.exchange?.keepAlive = head.isKeepAlive
        case .body(let bytes):
            guard let kept = self.exchange?.body.count, kept < self.bodyLimit else { return }
            self.exchange?.body += bytes.readableBytesView.prefix(self.bodyLimit - kept)
        case .end:
            guard let exchange = self.exchange, let status = exchange.status else { return }
            if !exchange.keepAlive { self.isReusable = false }
            let answer = HTTP1Answer(status: status, retryAfter: exchange.retryAfter, body: exchange.body, connectionReusable: self.isReusable)
            // Answer first: closing fires channelInactive at once, which would fail the exchange.
            self.finish(.success(answer))
            if !self.isReusable { context.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isReusable = false
        self.finish(.failure(HTTP1ExchangeError.connectionLost(self.failure ?? "connection closed")))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.isReusable = false
        self.failure = self.failure ?? String(String(describing: error).prefix(200))
        context.close(promise: nil)
    }

    /// The deadline of the exchange under way passed: the connection is closed and the exchange failed.
    private func deadlinePassed() {
        self.isReusable = false
        self.finish(.failure(HTTP1ExchangeError.deadlineExceeded))
        self.context?.close(promise: nil)
    }

    /// Calls ``deadlinePassed()`` on the event loop (holding the handler weakly, as the pipeline owns it).
    private struct DeadlineCallback: NIOScheduledCallbackHandler {
        weak var handler: HTTP1ExchangeHandler?

        func handleScheduledCallback(eventLoop: some EventLoop) {
            self.handler?.deadlinePassed()
        }
    }

    private func finish(_ result: Result<HTTP1Answer, any Error>) {
        guard let exchange = self.exchange else { return }
        self.exchange = nil
        exchange.timeout?.cancel()
        exchange.promise.completeWith(result)
    }
}
