import NIOCore
import NIOHPACK

/// The client side of one HTTP/2 connection to APNs (RFC 9113), above TLS: each request is a stream
/// (HEADERS, then DATA ending it) and each answer is collected from its stream's frames.
///
/// It does what an APNs client needs of HTTP/2 and no more, which costs a fraction of a general HTTP/2
/// stack's work per request: requests wait for the server's SETTINGS and for a free stream under its
/// SETTINGS_MAX_CONCURRENT_STREAMS; DATA respects the connection's and the stream's send windows; inbound
/// window is returned once half of it is used; PING is answered; a GOAWAY fails what the server did not
/// process as not processed; a stream whose deadline passes is reset; and a protocol error ends the
/// connection with GOAWAY. Header blocks are written by ``APNsHeaderBlockEncoder`` and read by NIOHPACK's
/// decoder. Everything one event-loop tick writes leaves in one write (one TLS record when it fits).
///
/// Everything runs on the channel's event loop.
final class APNsHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The most answer-body bytes kept (APNs' reasons are under 100 bytes).
    static let maximumAnswerBody = 16 * 1024
    /// The most bytes of one answer's header block (HEADERS and its CONTINUATION frames).
    static let maximumHeaderBlock = 64 * 1024

    /// One request's stream. (A class: the lists below share it, and a frame changes it in place.)
    private final class Stream {
        let id: UInt32
        let promise: EventLoopPromise<APNsAnswer>
        var timeout: Scheduled<Void>?
        /// The request until its stream is opened.
        var request: APNsRequest?
        var status: Int?
        var retryAfter: String?
        var body: ByteBuffer?
        /// Body bytes not yet sent (flow control).
        var unsent: ByteBuffer?
        var sendWindow = 0
        var receiveWindow = HTTP2Wire.defaultWindowSize
        /// Set once the stream is answered, failed or reset.
        var isClosed = false

        init(id: UInt32, promise: EventLoopPromise<APNsAnswer>, request: APNsRequest) {
            self.id = id
            self.promise = promise
            self.request = request
        }

        /// Whether the stream was opened (its HEADERS sent).
        var isOpen: Bool { self.request == nil }
    }

    /// A header block being read, continued by CONTINUATION frames.
    private struct PartialHeaderBlock {
        var streamID: UInt32
        var endStream: Bool
        var block: ByteBuffer
    }

    private let authority: String
    private var context: ChannelHandlerContext?
    private var encoder = APNsHeaderBlockEncoder()
    private var decoder: HPACKDecoder
    private var scratch: ByteBuffer

    private var streams: [UInt32: Stream] = [:]
    /// Streams waiting to be opened, oldest first (one closed meanwhile is skipped).
    private var waiting = CircularBuffer<Stream>()
    /// Opened streams with body bytes waiting for window, oldest first.
    private var blocked = CircularBuffer<Stream>()
    private var openStreams = 0
    private var nextStreamID: UInt32 = 1

    private var prefaceSent = false
    private var settingsReceived = false
    private var peerMaximumStreams = Int.max
    private var peerInitialWindow = HTTP2Wire.defaultWindowSize
    private var peerMaximumFrameSize = HTTP2Wire.defaultMaximumFrameSize
    private var sendWindow = HTTP2Wire.defaultWindowSize
    private var receiveWindow = HTTP2Wire.defaultWindowSize

    private var inbound: ByteBuffer?
    private var partialHeaderBlock: PartialHeaderBlock?
    private var outbound: ByteBuffer
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
        let allocator = ByteBufferAllocator()
        self.decoder = HPACKDecoder(allocator: allocator)
        self.scratch = allocator.buffer(capacity: 1024)
        self.outbound = allocator.buffer(capacity: 1024)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { self.sendPreface(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.failAll(.connectionLost("connection handler removed"))
    }

    func channelActive(context: ChannelHandlerContext) {
        self.sendPreface(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
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

    private func sendPreface(context: ChannelHandlerContext) {
        guard !self.prefaceSent else { return }
        self.prefaceSent = true
        self.outbound.writeStaticString(HTTP2Wire.preface)
        // No server push; everything else stays at its default.
        self.outbound.writeHTTP2Settings([(HTTP2Wire.Setting.enablePush, 0)])
        self.scheduleFlush(context: context)
    }

    // MARK: Requests

    /// Sends `request` on a new stream; `promise` gets the answer, or an ``APNsExchangeError``.
    func send(_ request: APNsRequest, deadline: NIODeadline, promise: EventLoopPromise<APNsAnswer>) {
        guard let context = self.context, !self.isClosing, self.nextStreamID < UInt32(Int32.max) - 2 else {
            self.stopTakingStreams()
            promise.fail(APNsExchangeError.notProcessed("connection is closing"))
            return
        }
        guard deadline > .now() else {
            promise.fail(APNsExchangeError.deadlineExceeded)
            return
        }
        // Ids are taken in order of arrival and streams opened in the same order, so they rise as RFC 9113
        // §5.1.1 requires (an id whose request expired while waiting is skipped, which is allowed).
        let streamID = self.nextStreamID
        self.nextStreamID += 2
        let stream = Stream(id: streamID, promise: promise, request: request)
        stream.timeout = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] () -> Void in
            self?.expire(streamID)
        }
        self.streams[streamID] = stream
        if self.waiting.isEmpty, self.canOpenStream {
            self.open(stream, context: context)
        } else {
            self.waiting.append(stream)
        }
    }

    private var canOpenStream: Bool {
        self.settingsReceived && !self.isClosing && self.openStreams < self.peerMaximumStreams
    }

    /// Opens the streams that wait, as far as the server's limit allows.
    private func openWaitingStreams(context: ChannelHandlerContext) {
        while self.canOpenStream, let stream = self.waiting.popFirst() {
            if !stream.isClosed { self.open(stream, context: context) }
        }
    }

    private func open(_ stream: Stream, context: ChannelHandlerContext) {
        guard let request = stream.request else { return }
        let streamID = stream.id
        stream.request = nil
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
    /// that must wait for window joins ``blocked``. Returns whether the body was all sent.
    @discardableResult
    private func sendData(of stream: Stream) -> Bool {
        guard var body = stream.unsent else { return true }
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
                return true
            }
        }
        stream.unsent = body
        stream.sendWindow = streamWindow
        self.blocked.append(stream)
        return false
    }

    /// Sends what the windows now allow of blocked streams' bodies, oldest first.
    private func sendBlockedData(context: ChannelHandlerContext) {
        guard !self.blocked.isEmpty else { return }
        let streams = self.blocked
        self.blocked.removeAll(keepingCapacity: true)
        for stream in streams where !stream.isClosed && stream.unsent != nil {
            self.sendData(of: stream)
        }
        self.scheduleFlush(context: context)
    }

    // MARK: Frames in

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        if self.inbound == nil {
            self.inbound = bytes
        } else {
            self.inbound!.writeBuffer(&bytes)
        }
        while let inbound = self.inbound, let head = HTTP2Wire.completeFrameHead(in: inbound) {
            guard head.length <= HTTP2Wire.defaultMaximumFrameSize else {
                return self.connectionError(.frameSizeError, "a frame of \(head.length) bytes", context: context)
            }
            self.inbound!.moveReaderIndex(forwardBy: HTTP2Wire.frameHeadSize)
            let payload = self.inbound!.readSlice(length: head.length)!
            self.process(head, payload, context: context)
            if self.failure != nil { return }
        }
        if self.inbound?.readableBytes == 0 {
            self.inbound = nil
        } else if let inbound = self.inbound, inbound.readerIndex > 16 * 1024 {
            self.inbound!.discardReadBytes()
        }
    }

    private func process(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        if let partial = self.partialHeaderBlock {
            guard head.type == HTTP2Wire.FrameType.continuation.rawValue, head.streamID == partial.streamID else {
                return self.connectionError(.protocolError, "a header block without its CONTINUATION", context: context)
            }
        } else if !self.settingsReceived, head.type != HTTP2Wire.FrameType.settings.rawValue {
            return self.connectionError(.protocolError, "a server preface without SETTINGS", context: context)
        }
        switch HTTP2Wire.FrameType(rawValue: head.type) {
        case .data: self.readData(head, payload, context: context)
        case .headers: self.readHeaders(head, payload, context: context)
        case .continuation: self.readContinuation(head, payload, context: context)
        case .rstStream: self.readResetStream(head, payload, context: context)
        case .settings: self.readSettings(head, payload, context: context)
        case .ping: self.readPing(head, payload, context: context)
        case .goAway: self.readGoAway(head, payload, context: context)
        case .windowUpdate: self.readWindowUpdate(head, payload, context: context)
        case .pushPromise: self.connectionError(.protocolError, "PUSH_PROMISE with push disabled", context: context)
        case .priority, nil: break  // advice only, or an extension frame: ignored (RFC 9113 §4.1, §5.5)
        }
    }

    /// The payload without its padding (PADDED flag), or nil when the padding is longer than the frame.
    private func unpadded(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer) -> ByteBuffer? {
        guard head.has(HTTP2Wire.Flag.padded) else { return payload }
        var payload = payload
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else { return nil }
        return payload.readSlice(length: payload.readableBytes - Int(padding))
    }

    private func readData(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard head.streamID != 0 else { return self.connectionError(.protocolError, "DATA on stream 0", context: context) }
        guard head.length <= self.receiveWindow else {
            return self.connectionError(.flowControlError, "DATA beyond the connection's window", context: context)
        }
        guard var data = self.unpadded(head, payload) else {
            return self.connectionError(.protocolError, "padding longer than its DATA frame", context: context)
        }
        // The whole frame counts against the windows, padding included; half a window used is returned.
        self.receiveWindow -= head.length
        if self.receiveWindow <= HTTP2Wire.defaultWindowSize / 2 {
            self.outbound.writeHTTP2WindowUpdate(streamID: 0, increment: HTTP2Wire.defaultWindowSize - self.receiveWindow)
            self.receiveWindow = HTTP2Wire.defaultWindowSize
            self.scheduleFlush(context: context)
        }
        let streamID = head.streamID
        guard let stream = self.streams[streamID], stream.isOpen else { return }  // answered, reset or expired
        guard stream.status != nil else {
            return self.reset(stream, .protocolError, failing: .streamReset("DATA before HEADERS"), context: context)
        }
        guard head.length <= stream.receiveWindow else {
            return self.reset(stream, .flowControlError, failing: .streamReset("DATA beyond the stream's window"), context: context)
        }
        stream.receiveWindow -= head.length
        if !head.has(HTTP2Wire.Flag.endStream), stream.receiveWindow <= HTTP2Wire.defaultWindowSize / 2 {
            self.outbound.writeHTTP2WindowUpdate(streamID: streamID, increment: HTTP2Wire.defaultWindowSize - stream.receiveWindow)
            stream.receiveWindow = HTTP2Wire.defaultWindowSize
            self.scheduleFlush(context: context)
        }
        let kept = stream.body?.readableBytes ?? 0
        if data.readableBytes > 0, kept < Self.maximumAnswerBody,
            var slice = data.readSlice(length: min(data.readableBytes, Self.maximumAnswerBody - kept))
        {
            if stream.body == nil {
                stream.body = slice
            } else {
                stream.body!.writeBuffer(&slice)
            }
        }
        if head.has(HTTP2Wire.Flag.endStream) { self.complete(stream, context: context) }
    }

    private func readHeaders(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard head.streamID != 0 else { return self.connectionError(.protocolError, "HEADERS on stream 0", context: context) }
        guard var block = self.unpadded(head, payload) else {
            return self.connectionError(.protocolError, "padding longer than its HEADERS frame", context: context)
        }
        if head.has(HTTP2Wire.Flag.priority) {
            guard block.readableBytes >= 5 else {
                return self.connectionError(.frameSizeError, "HEADERS too short for its priority", context: context)
            }
            block.moveReaderIndex(forwardBy: 5)
        }
        let endStream = head.has(HTTP2Wire.Flag.endStream)
        if head.has(HTTP2Wire.Flag.endHeaders) {
            self.readHeaderBlock(block, streamID: head.streamID, endStream: endStream, context: context)
        } else {
            self.partialHeaderBlock = PartialHeaderBlock(streamID: head.streamID, endStream: endStream, block: block)
        }
    }

    private func readContinuation(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard var partial = self.partialHeaderBlock else {
            return self.connectionError(.protocolError, "CONTINUATION without HEADERS", context: context)
        }
        guard partial.block.readableBytes + payload.readableBytes <= Self.maximumHeaderBlock else {
            return self.connectionError(.protocolError, "a header block over \(Self.maximumHeaderBlock) bytes", context: context)
        }
        var payload = payload
        partial.block.writeBuffer(&payload)
        if head.has(HTTP2Wire.Flag.endHeaders) {
            self.partialHeaderBlock = nil
            self.readHeaderBlock(partial.block, streamID: partial.streamID, endStream: partial.endStream, context: context)
        } else {
            self.partialHeaderBlock = partial
        }
    }

    /// Decodes a whole header block (always, to keep HPACK's table in step) and applies it to its stream.
    private func readHeaderBlock(_ block: ByteBuffer, streamID: UInt32, endStream: Bool, context: ChannelHandlerContext) {
        var block = block
        let headers: HPACKHeaders
        do {
            headers = try self.decoder.decodeHeaders(from: &block)
        } catch {
            return self.connectionError(.compressionError, "an undecodable header block", context: context)
        }
        guard let stream = self.streams[streamID], stream.isOpen else { return }
        // A 1xx head is followed by the real one; a second head after the real one is trailers.
        if stream.status == nil, let status = headers.first(name: ":status").flatMap(Int.init), status >= 200 {
            stream.status = status
            stream.retryAfter = headers.first(name: "retry-after")
        }
        if endStream { self.complete(stream, context: context) }
    }

    private func readResetStream(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard head.streamID != 0 else { return self.connectionError(.protocolError, "RST_STREAM on stream 0", context: context) }
        guard head.length == 4, let value = payload.getInteger(at: payload.readerIndex, as: UInt32.self) else {
            return self.connectionError(.frameSizeError, "RST_STREAM of \(head.length) bytes", context: context)
        }
        let code = HTTP2Wire.ErrorCode(value: value)
        let error: APNsExchangeError = code == .refusedStream ? .notProcessed("REFUSED_STREAM") : .streamReset(code.description)
        if let stream = self.streams[head.streamID] { self.close(stream, failing: error, context: context) }
    }

    private func readSettings(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard head.streamID == 0 else { return self.connectionError(.protocolError, "SETTINGS on a stream", context: context) }
        if head.has(HTTP2Wire.Flag.ack) {
            guard head.length == 0 else { return self.connectionError(.frameSizeError, "a SETTINGS ACK with a payload", context: context) }
            return
        }
        guard head.length % 6 == 0 else { return self.connectionError(.frameSizeError, "SETTINGS of \(head.length) bytes", context: context) }
        var payload = payload
        while let identifier = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            switch identifier {
            case HTTP2Wire.Setting.headerTableSize:
                self.encoder.setPeerTableSize(Int(value))
            case HTTP2Wire.Setting.enablePush:
                guard value <= 1 else { return self.connectionError(.protocolError, "SETTINGS_ENABLE_PUSH \(value)", context: context) }
            case HTTP2Wire.Setting.maxConcurrentStreams:
                self.peerMaximumStreams = Int(value)
            case HTTP2Wire.Setting.initialWindowSize:
                guard value <= UInt32(HTTP2Wire.maximumWindowSize) else {
                    return self.connectionError(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE \(value)", context: context)
                }
                // The change applies to every open stream's window (§6.9.2).
                let change = Int(value) - self.peerInitialWindow
                self.peerInitialWindow = Int(value)
                for stream in self.streams.values where stream.isOpen {
                    guard stream.sendWindow + change <= HTTP2Wire.maximumWindowSize else {
                        return self.connectionError(.flowControlError, "a stream window over 2^31-1", context: context)
                    }
                    stream.sendWindow += change
                }
            case HTTP2Wire.Setting.maxFrameSize:
                guard (HTTP2Wire.defaultMaximumFrameSize...0xFF_FFFF).contains(Int(value)) else {
                    return self.connectionError(.protocolError, "SETTINGS_MAX_FRAME_SIZE \(value)", context: context)
                }
                self.peerMaximumFrameSize = Int(value)
            default:
                break  // SETTINGS_MAX_HEADER_LIST_SIZE (advice) and unknown settings
            }
        }
        self.outbound.writeHTTP2Settings([], ack: true)
        self.settingsReceived = true
        self.sendBlockedData(context: context)
        self.openWaitingStreams(context: context)
        self.scheduleFlush(context: context)
    }

    private func readPing(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard head.streamID == 0 else { return self.connectionError(.protocolError, "PING on a stream", context: context) }
        guard head.length == 8 else { return self.connectionError(.frameSizeError, "PING of \(head.length) bytes", context: context) }
        guard !head.has(HTTP2Wire.Flag.ack) else { return }
        var payload = payload
        self.outbound.writeHTTP2FrameHead(length: 8, type: .ping, flags: HTTP2Wire.Flag.ack, streamID: 0)
        self.outbound.writeBuffer(&payload)
        self.scheduleFlush(context: context)
    }

    private func readGoAway(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard head.streamID == 0 else { return self.connectionError(.protocolError, "GOAWAY on a stream", context: context) }
        guard head.length >= 8, let last = payload.getInteger(at: payload.readerIndex, as: UInt32.self),
            let value = payload.getInteger(at: payload.readerIndex + 4, as: UInt32.self)
        else { return self.connectionError(.frameSizeError, "GOAWAY of \(head.length) bytes", context: context) }
        let lastStreamID = last & 0x7FFF_FFFF
        let code = HTTP2Wire.ErrorCode(value: value)
        self.stopTakingStreams()
        // Streams above the last one the server processed, and those never opened, were not processed.
        for stream in self.streams.values where stream.id > lastStreamID || !stream.isOpen {
            self.close(stream, failing: .notProcessed("GOAWAY \(code)"), context: context)
        }
    }

    private func readWindowUpdate(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard head.length == 4, let value = payload.getInteger(at: payload.readerIndex, as: UInt32.self) else {
            return self.connectionError(.frameSizeError, "WINDOW_UPDATE of \(head.length) bytes", context: context)
        }
        let increment = Int(value & 0x7FFF_FFFF)
        if head.streamID == 0 {
            guard increment > 0 else { return self.connectionError(.protocolError, "WINDOW_UPDATE of 0", context: context) }
            guard self.sendWindow + increment <= HTTP2Wire.maximumWindowSize else {
                return self.connectionError(.flowControlError, "a connection window over 2^31-1", context: context)
            }
            self.sendWindow += increment
        } else {
            guard let stream = self.streams[head.streamID], stream.isOpen else { return }
            guard increment > 0 else {
                return self.reset(stream, .protocolError, failing: .streamReset("WINDOW_UPDATE of 0"), context: context)
            }
            guard stream.sendWindow + increment <= HTTP2Wire.maximumWindowSize else {
                return self.reset(stream, .flowControlError, failing: .streamReset("a stream window over 2^31-1"), context: context)
            }
            stream.sendWindow += increment
        }
        self.sendBlockedData(context: context)
    }

    // MARK: Streams ending

    private func complete(_ stream: Stream, context: ChannelHandlerContext) {
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
    private func reset(_ stream: Stream, _ code: HTTP2Wire.ErrorCode, failing error: APNsExchangeError, context: ChannelHandlerContext) {
        if stream.isOpen {  // a stream still waiting was never announced
            self.outbound.writeHTTP2ResetStream(streamID: stream.id, code: code)
            self.scheduleFlush(context: context)
        }
        self.close(stream, failing: error, context: context)
    }

    private func close(_ stream: Stream, failing error: APNsExchangeError, context: ChannelHandlerContext) {
        self.remove(stream, context: context)
        stream.promise.fail(error)
    }

    /// Forgets a stream and lets a waiting one take its place.
    private func remove(_ stream: Stream, context: ChannelHandlerContext) {
        guard !stream.isClosed else { return }
        stream.isClosed = true
        self.streams.removeValue(forKey: stream.id)
        stream.timeout?.cancel()
        stream.unsent = nil
        if stream.isOpen {
            self.openStreams -= 1
            self.openWaitingStreams(context: context)
        }
        self.closeIfIdle()
    }

    /// The deadline of `streamID` passed: reset the stream (if it was opened) and fail the request.
    private func expire(_ streamID: UInt32) {
        guard let context = self.context, let stream = self.streams[streamID] else { return }
        self.reset(stream, .cancel, failing: .deadlineExceeded, context: context)
    }

    private func failAll(_ error: APNsExchangeError) {
        let streams = self.streams
        self.streams.removeAll()
        self.waiting.removeAll()
        self.blocked.removeAll()
        self.openStreams = 0
        for stream in streams.values {
            stream.isClosed = true
            stream.timeout?.cancel()
            stream.promise.fail(error)
        }
    }

    /// A protocol error: GOAWAY with `code`, then the connection closes and fails what is out.
    private func connectionError(_ code: HTTP2Wire.ErrorCode, _ what: String, context: ChannelHandlerContext) {
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

    private func closeIfIdle() {
        guard self.isClosing, self.streams.isEmpty, let context = self.context else { return }
        self.flushOutbound(context: context)
        context.close(promise: nil)
    }

    // MARK: Frames out

    /// Writes and flushes the frames gathered, then empties the buffer for the next ones: the TLS handler
    /// has usually encrypted the bytes and let go of them by then, so the same memory serves again
    /// (otherwise emptying it takes new memory, as copy-on-write does).
    private func flushOutbound(context: ChannelHandlerContext) {
        if self.outbound.readableBytes > 0 {
            context.write(self.wrapOutboundOut(self.outbound), promise: nil)
        }
        context.flush()
        self.outbound.clear()
    }

    /// One write and one flush at the end of this event-loop tick, for every frame of it.
    private func scheduleFlush(context: ChannelHandlerContext) {
        guard !self.flushScheduled else { return }
        self.flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            guard let context = self.context else { return }
            self.flushOutbound(context: context)
        }
    }
}
