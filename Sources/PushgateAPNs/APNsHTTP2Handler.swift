import NIOCore

/// The client side of one HTTP/2 connection to APNs (RFC 9113), above TLS: each request is a stream
/// (HEADERS, then DATA ending it) and each answer is collected from its stream's frames.
///
/// It does what an APNs client needs of HTTP/2 and no more, which costs a fraction of a general HTTP/2
/// stack's work per request: requests wait for the server's SETTINGS and for a free stream under its
/// SETTINGS_MAX_CONCURRENT_STREAMS; DATA respects the connection's and the stream's send windows; inbound
/// window is returned once half of it is used; PING is answered; a GOAWAY fails what the server did not
/// process as not processed; a stream whose deadline passes is reset; and a protocol error ends the
/// connection with GOAWAY. The connection proves it is alive with PINGs of its own (``APNsLiveness``):
/// one that goes unanswered ends it, failing the streams that were out as `connectionLost` and those
/// that never left as `notProcessed`. Header blocks are written by ``APNsHeaderBlockEncoder`` and read by
/// ``APNsHeaderBlockDecoder``. Everything one event-loop tick writes leaves in one write (one TLS record
/// when it fits).
///
/// Everything runs on the channel's event loop.
final class APNsHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The most answer-body bytes kept (APNs' reasons are under 100 bytes).
    static let maximumAnswerBody = 16 * 1024
    /// The most bytes of one answer's header block (HEADERS and its CONTINUATION frames).
    static let maximumHeaderBlock = 64 * 1024

    /// A header block being read, continued by CONTINUATION frames.
    struct PartialHeaderBlock {
        var streamID: UInt32
        var endStream: Bool
        var block: ByteBuffer
    }

    let authority: String
    var context: ChannelHandlerContext?
    var encoder = APNsHeaderBlockEncoder()
    var decoder = APNsHeaderBlockDecoder()
    var scratch: ByteBuffer

    var streams: [UInt32: APNsHTTP2Stream] = [:]
    /// Streams waiting to be opened, oldest first (one closed meanwhile is skipped).
    var waiting = CircularBuffer<APNsHTTP2Stream>()
    /// Streams that ended while waiting (their deadline passed) since ``waiting`` was last swept of them.
    var closedWhileWaiting = 0
    /// Opened streams with body bytes waiting for window, oldest first.
    var blocked = CircularBuffer<APNsHTTP2Stream>()
    var openStreams = 0
    var nextStreamID: UInt32 = 1

    var prefaceSent = false
    /// Gives the connection up when the server's SETTINGS have not come within
    /// ``APNsLiveness/settingsTimeout`` of the preface.
    var settingsDeadline: Scheduled<Void>?
    var settingsReceived = false
    var peerMaximumStreams = Int.max
    var peerInitialWindow = HTTP2Wire.defaultWindowSize
    var peerMaximumFrameSize = HTTP2Wire.defaultMaximumFrameSize
    var sendWindow = HTTP2Wire.defaultWindowSize
    var receiveWindow = HTTP2Wire.defaultWindowSize

    var inbound: ByteBuffer?
    var partialHeaderBlock: PartialHeaderBlock?
    var outbound: ByteBuffer
    var flushScheduled = false

    /// What ended the connection, for the requests it fails.
    var failure: String?
    /// Set once the connection takes no new streams (GOAWAY, closed, or stream ids used up).
    private(set) var isClosing = false
    /// Called once, on the event loop, when the connection stops taking new streams.
    var onClosing: (() -> Void)?
    /// Called once, on the event loop, when the server's first SETTINGS arrive: the connection is made.
    var onSettings: (() -> Void)?

    /// When to PING and when to give the connection up.
    let liveness: APNsLiveness
    /// When the last bytes arrived (the event loop's clock).
    var lastHeard = NIODeadline.uptimeNanoseconds(0)
    /// Frames read so far: a stream that expires with the count unchanged since it opened heard nothing.
    var framesRead: UInt64 = 0
    /// The PING waiting for its ACK: its payload and the timer that gives the connection up.
    var outstandingPing: (payload: UInt64, timeout: Scheduled<Void>)?
    /// Set while new streams wait for the ACK of a PING sent because the connection had been silent for
    /// the whole ping interval.
    var verifying = false
    /// The timer that looks at the connection's silence every ``APNsLiveness/checkInterval``.
    var livenessCheck: Scheduled<Void>?
    /// PINGs this connection sent, for making each payload distinct.
    var pingsSent: UInt64 = 0
    /// Told of PINGs sent and missed, on the event loop.
    var onLivenessEvent: ((APNsLivenessEvent) -> Void)?

    /// - Parameters:
    ///   - authority: the `:authority` of every request (`host[:port]`).
    ///   - liveness: when to PING and when to give the connection up.
    init(authority: String, liveness: APNsLiveness = APNsLiveness()) {
        self.authority = authority
        self.liveness = liveness
        let allocator = ByteBufferAllocator()
        self.scratch = allocator.buffer(capacity: 1024)
        self.outbound = allocator.buffer(capacity: 1024)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { self.sendPreface(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.stopLivenessTimers()
        self.failAll(.connectionLost("connection handler removed"))
    }

    func channelActive(context: ChannelHandlerContext) {
        self.sendPreface(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stopLivenessTimers()
        self.stopTakingStreams()
        self.failAll(.connectionLost(self.failure ?? "connection closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // TLS and connection errors carry no secrets.
        self.failure = self.failure ?? String(describing: type(of: error)) + ": " + String(String(describing: error).prefix(200))
        self.stopTakingStreams()
        context.close(promise: nil)
    }

    func sendPreface(context: ChannelHandlerContext) {
        guard !self.prefaceSent else { return }
        self.prefaceSent = true
        self.outbound.writeStaticString(HTTP2Wire.preface)
        // No server push; everything else stays at its default.
        self.outbound.writeHTTP2Settings([(HTTP2Wire.Setting.enablePush, 0)])
        self.scheduleFlush(context: context)
        self.lastHeard = context.eventLoop.now
        self.scheduleSettingsDeadline(context: context)
        self.scheduleLivenessCheck(context: context)
    }

    // MARK: Requests

    /// Sends `request` on a new stream; `promise` gets the answer, or an ``APNsExchangeError``.
    func send(_ request: APNsRequest, deadline: NIODeadline, promise: EventLoopPromise<APNsAnswer>) {
        guard let context = self.context, !self.isClosing, self.nextStreamID < UInt32(Int32.max) - 2 else {
            self.stopTakingStreams()
            promise.fail(APNsExchangeError.notProcessed("connection is closing"))
            return
        }
        let now = context.eventLoop.now
        guard deadline > now else {
            promise.fail(APNsExchangeError.deadlineExceeded)
            return
        }
        // Ids are taken in order of arrival and streams opened in the same order, so they rise as RFC 9113
        // §5.1.1 requires (an id whose request expired while waiting is skipped, which is allowed).
        let streamID = self.nextStreamID
        self.nextStreamID += 2
        let stream = APNsHTTP2Stream(id: streamID, promise: promise, request: request)
        stream.timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] () -> Void in
            self?.expire(streamID)
        }
        self.streams[streamID] = stream
        // A connection silent for the whole ping interval may have died unseen (a NAT or a proxy forgot
        // it): new streams wait until it answers a PING.
        if self.settingsReceived, !self.verifying, now - self.lastHeard >= self.liveness.pingInterval {
            self.verifying = true
            if self.outstandingPing == nil { self.sendPing(context: context) }
        }
        if self.waiting.isEmpty, self.canOpenStream {
            self.open(stream, context: context)
        } else {
            self.waiting.append(stream)
        }
    }

    var canOpenStream: Bool {
        self.settingsReceived && !self.verifying && !self.isClosing && self.openStreams < self.peerMaximumStreams
    }

    /// Opens the streams that wait, as far as the server's limit allows.
    func openWaitingStreams(context: ChannelHandlerContext) {
        while self.canOpenStream, let stream = self.waiting.popFirst() {
            if !stream.isClosed { self.open(stream, context: context) }
        }
    }

    func open(_ stream: APNsHTTP2Stream, context: ChannelHandlerContext) {
        guard let request = stream.request else { return }
        let streamID = stream.id
        stream.request = nil
        stream.framesReadWhenOpened = self.framesRead
        stream.sendWindow = self.peerInitialWindow
        self.openStreams += 1

        self.scratch.clear()
        self.encoder.encodeRequest(
            path: request.path, authority: self.authority, headers: request.headers,
            contentLength: request.body.readableBytes, into: &self.scratch)
        // A block longer than the server's frame size continues in CONTINUATION frames.
        var type = HTTP2Wire.FrameType.headers
        repeat {
            let length = min(self.scratch.readableBytes, self.peerMaximumFrameSize)
            var chunk = self.scratch.readSlice(length: length)!
            let last = self.scratch.readableBytes == 0
            self.outbound.writeHTTP2FrameHead(length: length, type: type, flags: last ? HTTP2Wire.Flag.endHeaders : 0, streamID: streamID)
            self.outbound.writeBuffer(&chunk)
            type = .continuation
        } while self.scratch.readableBytes > 0
        stream.unsent = request.body
        self.sendData(of: stream)
        self.scheduleFlush(context: context)
    }

    /// Sends what the windows allow of a stream's body, ending the stream with the last byte; a stream
    /// that must wait for window joins ``blocked``.
    func sendData(of stream: APNsHTTP2Stream) {
        guard var body = stream.unsent else { return }
        stream.unsent = nil  // not shared while the slices below are read
        let streamID = stream.id
        var streamWindow = stream.sendWindow
        while true {
            // An empty frame (the end of an empty body) needs no window; a window can be below zero after
            // SETTINGS shrank it (§6.9.2).
            let length = body.readableBytes == 0 ? 0 : min(body.readableBytes, self.sendWindow, streamWindow, self.peerMaximumFrameSize)
            if length <= 0, body.readableBytes > 0 { break }
            var chunk = body.readSlice(length: length)!
            let last = body.readableBytes == 0
            self.outbound.writeHTTP2FrameHead(length: length, type: .data, flags: last ? HTTP2Wire.Flag.endStream : 0, streamID: streamID)
            self.outbound.writeBuffer(&chunk)
            self.sendWindow -= length
            streamWindow -= length
            if last {
                stream.sendWindow = streamWindow
                return
            }
        }
        stream.unsent = body
        stream.sendWindow = streamWindow
        self.blocked.append(stream)
    }

    /// Sends what the windows now allow of blocked streams' bodies, oldest first.
    func sendBlockedData(context: ChannelHandlerContext) {
        guard !self.blocked.isEmpty else { return }
        let streams = self.blocked
        self.blocked.removeAll(keepingCapacity: true)
        for stream in streams where !stream.isClosed && stream.unsent != nil {
            self.sendData(of: stream)
        }
        self.scheduleFlush(context: context)
    }

    // MARK: Streams ending

    func complete(_ stream: APNsHTTP2Stream, context: ChannelHandlerContext) {
        guard let status = stream.status else {
            return self.close(stream, failing: .streamReset("answer without :status"), context: context)
        }
        if stream.unsent != nil {
            // Answered before the whole body left (RFC 9113 §8.1): the rest is not wanted.
            self.outbound.writeHTTP2ResetStream(streamID: stream.id, code: .cancel)
            self.scheduleFlush(context: context)
        }
        self.remove(stream, context: context)
        stream.promise.succeed(APNsAnswer(status: status, retryAfter: stream.retryAfter, body: stream.body ?? ByteBuffer()))
    }

    /// Ends a stream from this side: RST_STREAM with `code` (if it was opened), and the request fails.
    func reset(_ stream: APNsHTTP2Stream, _ code: HTTP2Wire.ErrorCode, failing error: APNsExchangeError, context: ChannelHandlerContext) {
        if stream.isOpen {  // a stream still waiting was never announced
            self.outbound.writeHTTP2ResetStream(streamID: stream.id, code: code)
            self.scheduleFlush(context: context)
        }
        self.close(stream, failing: error, context: context)
    }

    func close(_ stream: APNsHTTP2Stream, failing error: APNsExchangeError, context: ChannelHandlerContext) {
        self.remove(stream, context: context)
        stream.promise.fail(error)
    }

    /// Forgets a stream and lets a waiting one take its place.
    func remove(_ stream: APNsHTTP2Stream, context: ChannelHandlerContext) {
        guard !stream.isClosed else { return }
        stream.isClosed = true
        self.streams.removeValue(forKey: stream.id)
        stream.timeout?.cancel()
        stream.unsent = nil
        if stream.isOpen {
            self.openStreams -= 1
            self.openWaitingStreams(context: context)
        } else {
            // A server that holds its stream limit (at zero, say) while it answers PINGs: requests end at
            // their deadlines, and the queue lets go of them (headers with the provider token, body) once
            // half of it has ended, instead of growing with every request.
            self.closedWhileWaiting += 1
            if self.closedWhileWaiting >= 32, self.closedWhileWaiting * 2 >= self.waiting.count {
                self.waiting.removeAll { $0.isClosed }
                self.closedWhileWaiting = 0
            }
        }
        self.closeIfIdle()
    }

    /// The deadline of `streamID` passed: reset the stream (if it was opened) and fail the request. A
    /// stream that heard not one frame while it was out has the connection probed with a PING.
    func expire(_ streamID: UInt32) {
        guard let context = self.context, let stream = self.streams[streamID] else { return }
        let heardNothing = stream.isOpen && stream.framesReadWhenOpened == self.framesRead
        self.reset(stream, .cancel, failing: .deadlineExceeded, context: context)
        if heardNothing, self.outstandingPing == nil, self.failure == nil { self.sendPing(context: context) }
    }

    func failAll(_ error: APNsExchangeError) {
        let streams = self.streams
        self.streams.removeAll()
        self.waiting.removeAll()
        self.closedWhileWaiting = 0
        self.blocked.removeAll()
        self.openStreams = 0
        // A stream never opened never left: sending it again cannot duplicate it.
        let unsent: APNsExchangeError = if case .connectionLost(let why) = error { .notProcessed(why) } else { error }
        for stream in streams.values {
            stream.isClosed = true
            stream.timeout?.cancel()
            stream.promise.fail(stream.isOpen ? error : unsent)
        }
    }

    /// A protocol error: GOAWAY with `code`, then the connection closes and fails what is out.
    func connectionError(_ code: HTTP2Wire.ErrorCode, _ what: String, context: ChannelHandlerContext) {
        guard self.failure == nil else { return }
        self.failure = "HTTP/2 \(code): \(what)"
        self.inbound = nil
        self.outbound.writeHTTP2GoAway(lastStreamID: 0, code: code)
        self.flushOutbound(context: context)
        self.stopTakingStreams()
        context.close(promise: nil)
    }

    /// Stops new streams, closing the connection once none is left.
    func stopTakingStreams() {
        guard !self.isClosing else { return }
        self.isClosing = true
        self.onClosing?()
        self.onClosing = nil
        self.closeIfIdle()
    }

    func closeIfIdle() {
        guard self.isClosing, self.streams.isEmpty, let context = self.context else { return }
        self.flushOutbound(context: context)
        context.close(promise: nil)
    }

    // MARK: Frames out

    /// Writes and flushes the frames gathered, then empties the buffer for the next ones: the TLS handler
    /// has usually encrypted the bytes and let go of them by then, so the same memory serves again
    /// (otherwise emptying it takes new memory, as copy-on-write does).
    func flushOutbound(context: ChannelHandlerContext) {
        if self.outbound.readableBytes > 0 {
            context.write(self.wrapOutboundOut(self.outbound), promise: nil)
        }
        context.flush()
        self.outbound.clear()
    }

    /// One write and one flush at the end of this event-loop tick, for every frame of it.
    func scheduleFlush(context: ChannelHandlerContext) {
        guard !self.flushScheduled else { return }
        self.flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            guard let context = self.context else { return }
            self.flushOutbound(context: context)
        }
    }
}
