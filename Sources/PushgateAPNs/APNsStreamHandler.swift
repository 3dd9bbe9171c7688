import NIOCore
import NIOHPACK
import NIOHTTP2

/// The request side of one HTTP/2 connection to APNs, on NIOHTTP2's frame API: each request is a client
/// stream (HEADERS, then DATA ending the stream) and each answer is collected from the frames of its
/// stream, with no channel and no task per stream; a request costs a dictionary entry until it is answered.
///
/// `NIOHTTP2Handler` below it checks the protocol, buffers new streams beyond the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` and DATA beyond its flow-control window; this handler returns inbound
/// window as NIOHTTP2's multiplexer would, flushes once per event-loop tick (so concurrent requests leave
/// in one TLS record), resets streams whose deadline passes, and fails what the server refuses by GOAWAY as
/// not processed. Everything runs on the channel's event loop.
final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private struct PendingStream {
        var promise: EventLoopPromise<APNsAnswer>
        var timeout: Scheduled<Void>?
        var status: Int?
        var retryAfter: String?
        var body: ByteBuffer?
    }

    /// The inbound window kept open, as NIOHTTP2's multiplexer keeps it.
    static let targetWindowSize = 65_535
    /// The most answer-body bytes kept (APNs' reasons are under 100 bytes).
    static let maximumAnswerBody = 16 * 1024

    private let authority: String
    private var context: ChannelHandlerContext?
    private var streams: [HTTP2StreamID: PendingStream] = [:]
    private var nextStreamID: Int32 = 1
    private var flushScheduled = false
    /// What ended the connection, for the requests it fails.
    private var failure: String?
    /// Set once the connection takes no new streams (GOAWAY, closed, or stream ids used up).
    private(set) var isClosing = false
    /// Called once, on the event loop, when the connection stops taking new streams.
    var onClosing: (() -> Void)?

    /// - Parameter authority: the `:authority` of every request (`host[:port]`).
    init(authority: String) {
        self.authority = authority
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.failAll(.connectionLost("connection handler removed"))
    }

    /// Sends `request` on a new stream; `promise` gets the answer, or an ``APNsExchangeError``.
    func send(_ request: APNsRequest, deadline: NIODeadline, promise: EventLoopPromise<APNsAnswer>) {
        guard let context = self.context, !self.isClosing, self.nextStreamID < Int32.max - 2 else {
            self.stopTakingStreams()
            promise.fail(APNsExchangeError.notProcessed("connection is closing"))
            return
        }
        guard deadline > .now() else {
            promise.fail(APNsExchangeError.deadlineExceeded)
            return
        }
        let streamID = HTTP2StreamID(self.nextStreamID)
        self.nextStreamID += 2
        var headers = HPACKHeaders()
        headers.reserveCapacity(request.headers.count + 5)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        // Values that change from request to request (the device token's path, the request id, the
        // expiry) are not put in the HPACK table, where they would only push out the ones that repeat
        // (the provider token, the topic).
        headers.add(name: ":path", value: request.path, indexing: .nonIndexable)
        headers.add(name: ":authority", value: self.authority)
        for header in request.headers {
            headers.add(name: header.name, value: header.value, indexing: Self.changesPerRequest(header.name) ? .nonIndexable : .indexable)
        }
        headers.add(name: "content-length", value: String(request.body.readableBytes))
        let timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] () -> Void in
            guard let self else { return }
            self.expire(streamID)
        }
        self.streams[streamID] = PendingStream(promise: promise, timeout: timeout)
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        let data = HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(request.body), endStream: true)))
        context.write(self.wrapOutboundOut(data), promise: nil)
        self.scheduleFlush(context: context)
    }

    /// Whether a header's value is new on nearly every request.
    static func changesPerRequest(_ name: String) -> Bool {
        name == "apns-id" || name == "apns-expiration"
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        let streamID = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            guard self.streams[streamID] != nil else { return }
            if let status = headers.headers.first(name: ":status").flatMap(Int.init) {
                // A 1xx head is followed by the real one.
                if status >= 200 {
                    self.streams[streamID]?.status = status
                    self.streams[streamID]?.retryAfter = headers.headers.first(name: "retry-after")
                }
            }
            if headers.endStream { self.complete(streamID) }
        case .data(let data):
            guard self.streams[streamID] != nil else { return }
            if case .byteBuffer(var bytes) = data.data, bytes.readableBytes > 0 {
                let kept = self.streams[streamID]?.body?.readableBytes ?? 0
                if kept < Self.maximumAnswerBody, let slice = bytes.readSlice(length: min(bytes.readableBytes, Self.maximumAnswerBody - kept)) {
                    if self.streams[streamID]?.body == nil {
                        self.streams[streamID]?.body = slice
                    } else {
                        var slice = slice
                        self.streams[streamID]?.body?.writeBuffer(&slice)
                    }
                }
            }
            if data.endStream { self.complete(streamID) }
        case .rstStream(let code):
            let error: APNsExchangeError = code == .refusedStream ? .notProcessed("REFUSED_STREAM") : .streamReset("\(code)")
            self.fail(streamID, error)
        case .goAway(let lastStreamID, let code, _):
            self.stopTakingStreams()
            for id in self.streams.keys where id > lastStreamID {
                self.fail(id, .notProcessed("GOAWAY \(code)"))
            }
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // NIOHTTP2 sends several events per stream; comparing the dynamic type first spares a runtime
        // cast of each event to each type.
        let type = ObjectIdentifier(Swift.type(of: event))
        if type == ObjectIdentifier(NIOHTTP2WindowUpdatedEvent.self), let event = event as? NIOHTTP2WindowUpdatedEvent {
            self.windowChanged(event, context: context)
        } else if type == ObjectIdentifier(StreamClosedEvent.self), let event = event as? StreamClosedEvent {
            // Closed without a complete answer (reset by NIOHTTP2 for a protocol error, say).
            if self.streams[event.streamID] != nil {
                self.fail(event.streamID, .streamReset(event.reason.map { "\($0)" } ?? "closed"))
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stopTakingStreams()
        self.failAll(.connectionLost(self.failure ?? "connection closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream-level error has reset its stream (reported by StreamClosedEvent); anything else ends
        // the connection, and the close fails what is still out.
        if error is NIOHTTP2Errors.StreamError { return }
        self.failure = self.failure ?? String(describing: type(of: error)) + ": " + Self.describe(error)
        self.stopTakingStreams()
        context.close(promise: nil)
    }

    /// A short description of a connection error (TLS and HTTP/2 errors carry no secrets).
    private static func describe(_ error: any Error) -> String {
        String(String(describing: error).prefix(200))
    }

    /// Stops new streams, closing the connection once none is left.
    func stopTakingStreams() {
        guard !self.isClosing else { return }
        self.isClosing = true
        self.onClosing?()
        self.onClosing = nil
        self.closeIfIdle()
    }

    private func closeIfIdle() {
        if self.isClosing, self.streams.isEmpty { self.context?.close(promise: nil) }
    }

    private func complete(_ streamID: HTTP2StreamID) {
        guard let stream = self.streams.removeValue(forKey: streamID) else { return }
        stream.timeout?.cancel()
        guard let status = stream.status else {
            stream.promise.fail(APNsExchangeError.streamReset("answer without :status"))
            self.closeIfIdle()
            return
        }
        stream.promise.succeed(APNsAnswer(status: status, retryAfter: stream.retryAfter, body: stream.body ?? ByteBuffer()))
        self.closeIfIdle()
    }

    private func fail(_ streamID: HTTP2StreamID, _ error: APNsExchangeError) {
        guard let stream = self.streams.removeValue(forKey: streamID) else { return }
        stream.timeout?.cancel()
        stream.promise.fail(error)
        self.closeIfIdle()
    }

    private func failAll(_ error: APNsExchangeError) {
        let streams = self.streams
        self.streams.removeAll()
        for stream in streams.values {
            stream.timeout?.cancel()
            stream.promise.fail(error)
        }
    }

    /// The deadline of `streamID` passed: reset the stream and fail the request.
    private func expire(_ streamID: HTTP2StreamID) {
        guard self.streams[streamID] != nil, let context = self.context else { return }
        self.fail(streamID, .deadlineExceeded)
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        self.scheduleFlush(context: context)
    }

    /// One flush at the end of this event-loop tick, for everything written during it.
    private func scheduleFlush(context: ChannelHandlerContext) {
        guard !self.flushScheduled else { return }
        self.flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            self.context?.flush()
        }
    }

    /// Returns inbound window as NIOHTTP2's multiplexer does: back to the target once half of it is used.
    private func windowChanged(_ event: NIOHTTP2WindowUpdatedEvent, context: ChannelHandlerContext) {
        guard let window = event.inboundWindowSize else { return }
        if event.streamID != .rootStream, self.streams[event.streamID] == nil { return }
        let target = Self.targetWindowSize
        // Half used (or overdrawn, when the window shrank below what was already sent): top it up.
        guard window <= target / 2 else { return }
        let increment = min(target - window, Int(Int32.max))
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: event.streamID, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
        self.scheduleFlush(context: context)
    }
}
