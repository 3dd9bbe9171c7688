import NIOCore

/// Reading the server's frames: each complete frame is checked and applied to the connection or its
/// stream (RFC 9113 §6); whatever breaks the protocol ends the connection with GOAWAY.
extension APNsHTTP2Handler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        self.lastHeard = context.eventLoop.now
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
        self.framesRead &+= 1
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
        let fields: APNsHeaderBlockDecoder.Fields
        do {
            fields = try self.decoder.decode(block)
        } catch {
            return self.connectionError(.compressionError, "an undecodable header block", context: context)
        }
        guard let stream = self.streams[streamID], stream.isOpen else { return }
        // A 1xx head is followed by the real one; a second head after the real one is trailers.
        if stream.status == nil, let status = fields.status, status >= 200 {
            stream.status = status
            stream.retryAfter = fields.retryAfter
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
        if !self.settingsReceived {
            self.settingsReceived = true
            self.onSettings?()
            self.onSettings = nil
        }
        self.settingsDeadline?.cancel()
        self.settingsDeadline = nil
        self.sendBlockedData(context: context)
        self.openWaitingStreams(context: context)
        self.scheduleFlush(context: context)
    }

    private func readPing(_ head: HTTP2Wire.FrameHead, _ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard head.streamID == 0 else { return self.connectionError(.protocolError, "PING on a stream", context: context) }
        guard head.length == 8 else { return self.connectionError(.frameSizeError, "PING of \(head.length) bytes", context: context) }
        guard !head.has(HTTP2Wire.Flag.ack) else {
            return self.pingAcknowledged(payload.getInteger(at: payload.readerIndex, as: UInt64.self), context: context)
        }
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
}
