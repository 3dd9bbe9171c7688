import NIOCore
import NIOHTTP1

/// One HTTP/1.1 connection of an ``HTTP1ConnectionPool``, one request at a time: writes the request's
/// bytes (made by ``HTTP1RequestSerializer`` before a connection is taken), reads the answer's status, `Retry-After` and the start of its body
/// (``HTTP1ResponseParser``), and says whether the connection may carry another request. It is the only
/// handler above TLS: serialising and parsing here instead of in NIO's HTTP/1 codec (encoder, header
/// validator, decoder) saves about a tenth of a Web Push or FCM delivery's instructions. Runs on the
/// channel's event loop.
final class HTTP1ExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    init(bodyLimit: Int) {
        self.parser = HTTP1ResponseParser(bodyLimit: bodyLimit)
    }

    private struct Exchange {
        var promise: EventLoopPromise<HTTP1Answer>
        var deadline: NIODeadline
    }

    private var context: ChannelHandlerContext?
    private var parser: HTTP1ResponseParser
    private var exchange: Exchange?
    /// The timer that ends an exchange at its deadline, and when it fires. It stays set after an
    /// exchange ends: the next request's deadline is usually later, and the timer, when it fires, looks
    /// at the exchange under way then (setting and cancelling a timer for each request was about 6 % of
    /// an FCM delivery's instructions).
    private var timer: (callback: NIOScheduledCallback, fires: NIODeadline)?
    private var failure: String?
    /// Whether any byte of an answer came since the exchange under way was sent.
    private var answerStarted = false
    /// Whether the connection may take another request (set false once the server or an error ends it).
    private(set) var isReusable = true

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.timer?.callback.cancel()
        self.timer = nil
        self.finish(.failure(self.lost("handler removed")))
    }

    /// Sends one request's bytes (``HTTP1RequestSerializer``); `promise` gets the answer or a
    /// ``HTTP1ExchangeError``.
    func send(_ request: ByteBuffer, deadline: NIODeadline, promise: EventLoopPromise<HTTP1Answer>) {
        guard let context = self.context, self.isReusable, self.exchange == nil, context.channel.isActive else {
            promise.fail(HTTP1ExchangeError.notSent)
            return
        }
        guard self.armTimer(for: deadline, on: context.eventLoop) else {
            // The event loop is shutting down: nothing could bound the wait, so nothing is sent.
            promise.fail(HTTP1ExchangeError.shutDown)
            return
        }
        self.exchange = Exchange(promise: promise, deadline: deadline)
        self.answerStarted = false
        context.writeAndFlush(self.wrapOutboundOut(request), promise: nil)
    }

    /// Makes sure the timer fires no later than `deadline`; false when no timer can be set.
    private func armTimer(for deadline: NIODeadline, on eventLoop: any EventLoop) -> Bool {
        if let timer = self.timer, timer.fires <= deadline { return true }
        // A callback rather than a scheduled task: no promise and future to make and fail.
        guard let callback = try? eventLoop.assumeIsolated().scheduleCallback(at: deadline, handler: DeadlineCallback(handler: self)) else {
            return false
        }
        self.timer?.callback.cancel()
        self.timer = (callback, deadline)
        return true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Bytes when no request is out (a server's farewell, say) end the connection.
        guard self.exchange != nil, self.isReusable else {
            self.isReusable = false
            context.close(promise: nil)
            return
        }
        self.answerStarted = true
        var answer: HTTP1Answer
        do {
            guard let read = try self.parser.read(self.unwrapInboundIn(data)) else { return }
            answer = read
        } catch {
            self.failure = error.description
            self.errorCaught(context: context, error: error)
            return
        }
        // More bytes after the answer: the server does not answer one request at a time.
        if !answer.connectionReusable || self.parser.hasUnparsedBytes { self.isReusable = false }
        answer.connectionReusable = self.isReusable
        // Answer first: closing fires channelInactive at once, which would fail the exchange.
        self.finish(.success(answer))
        if !self.isReusable { context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.isReusable = false
        if self.exchange != nil {
            // An answer whose body runs until the connection closes ends here.
            do {
                if let answer = try self.parser.connectionClosed() { self.finish(.success(answer)) }
            } catch {
                self.failure = self.failure ?? error.description
            }
        }
        self.finish(.failure(self.lost(self.failure ?? "connection closed")))
        context.fireChannelInactive()
    }

    /// The error for an exchange the connection ended: ``HTTP1ClosedUnanswered`` when not one byte of an
    /// answer had come, else ``HTTP1ExchangeError/connectionLost(_:)``.
    private func lost(_ why: String) -> any Error {
        self.answerStarted ? HTTP1ExchangeError.connectionLost(why) : HTTP1ClosedUnanswered(why: why)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.isReusable = false
        self.failure = self.failure ?? String(String(describing: error).prefix(200))
        context.close(promise: nil)
    }

    /// Brings the deadline of the exchange under way forward to `deadline`, if that is earlier and the
    /// exchange is still the one whose answer goes to `future` (by then the connection may carry
    /// another's).
    func shortenDeadline(to deadline: NIODeadline, of future: EventLoopFuture<HTTP1Answer>) {
        guard let context = self.context, let exchange = self.exchange, exchange.promise.futureResult === future, deadline < exchange.deadline
        else { return }
        guard self.armTimer(for: deadline, on: context.eventLoop) else { return }
        self.exchange?.deadline = deadline
    }

    /// The timer fired: the exchange under way, if its deadline has passed, fails and the connection
    /// closes; if it has not, the timer is set for it.
    private func timerFired() {
        self.timer = nil
        guard let exchange = self.exchange, let context = self.context else { return }
        guard NIODeadline.now() >= exchange.deadline else {
            if !self.armTimer(for: exchange.deadline, on: context.eventLoop) { self.deadlinePassed() }
            return
        }
        self.deadlinePassed()
    }

    /// The deadline of the exchange under way passed: the connection is closed and the exchange failed.
    private func deadlinePassed() {
        self.isReusable = false
        self.finish(.failure(HTTP1ExchangeError.deadlineExceeded))
        self.context?.close(promise: nil)
    }

    /// Calls ``timerFired()`` on the event loop (holding the handler weakly, as the pipeline owns it).
    private struct DeadlineCallback: NIOScheduledCallbackHandler {
        weak var handler: HTTP1ExchangeHandler?

        func handleScheduledCallback(eventLoop: some EventLoop) {
            self.handler?.timerFired()
        }
    }

    private func finish(_ result: Result<HTTP1Answer, any Error>) {
        guard let exchange = self.exchange else { return }
        self.exchange = nil
        exchange.promise.completeWith(result)
    }
}
