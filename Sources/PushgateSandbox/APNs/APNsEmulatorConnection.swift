import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL
import PushgateProviderSupport

/// How the APNs emulator serves one TCP connection: TLS, then HTTP/2 (`NIOHTTP2Handler`, which checks
/// the protocol: preface, frame and stream states, content length, flow control), then
/// ``APNsEmulatorConnectionHandler``, which checks each header block (``HTTP2FieldCheck``) and answers each
/// stream on the event loop as soon as its request has ended. There is no channel and no task per stream: a request costs a dictionary entry until it ends.
///
/// A Hummingbird server child channel, so the emulator still runs as a Hummingbird `Application` (binding,
/// `onServerRunning`, graceful shutdown through `ChannelShouldQuiesceEvent`).
struct APNsEmulatorServerChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    let emulator: APNsEmulator
    let sslContext: NIOSSLContext

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // Hummingbird's server allows half-closed connections; HTTP/2 over TLS has no use for them, and
            // with them NIOSSL would wait out its 5-second shutdown timeout after the peer's close_notify.
            try channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(NIOSSLServerHandler(context: self.sslContext))
            // The answers of one read go out as one TLS record, not one record for each frame.
            try pipeline.addHandler(OutboundWriteCoalescer())
            // HTTP/2 only, by ALPN `h2` or by prior knowledge: anything else fails the connection preface.
            // Header blocks are checked by the connection handler (`HTTP2FieldCheck`), as NIOHTTP2 would.
            try pipeline.addHandler(NIOHTTP2Handler(mode: .server, headerBlockValidation: .disabled))
            try pipeline.addHandler(APNsEmulatorConnectionHandler(emulator: self.emulator))
            return Value(channel: channel)
        }
    }

    /// Waits for the connection to close (the handlers do all the work); cancellation closes it.
    func handle(value: Value, logger: Logger) async {
        await value.channel.closedOrClosedOnCancellation()
    }
}

/// Collects each HTTP/2 stream's request (HEADERS, DATA, optional trailers) and answers it with APNs'
/// HEADERS (and a JSON DATA frame for a refusal) once the request ends, flushing once per read.
///
/// Without NIOHTTP2's stream multiplexer, it also returns the flow-control window the way the
/// multiplexer would (connection and stream windows back to 65,535 bytes once half is used).
final class APNsEmulatorConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// A request still being received.
    fileprivate struct PendingRequest {
        var headers: HPACKHeaders
        var body: ByteBuffer?
    }

    /// More body than this is not kept (the limits are 4096 and 5120 bytes; the rest is drained).
    static let maximumKeptBody = 64 * 1024
    /// The inbound window NIOHTTP2's multiplexer keeps, and this handler with it.
    static let targetWindowSize = 65_535

    private let emulator: APNsEmulator
    private var pending: [HTTP2StreamID: PendingRequest] = [:]
    private var highestStreamID: HTTP2StreamID = .rootStream
    private var needsFlush = false
    private var quiescing = false
    /// The client certificate's UID once looked up (`.some(nil)`: no certificate).
    private var certificateUserID: String??

    init(emulator: APNsEmulator) {
        self.emulator = emulator
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        let streamID = frame.streamID
        switch frame.payload {
        case .headers(let headers):
            if self.pending[streamID] == nil {
                // Request headers (trailers, a second HEADERS, only end the request).
                if streamID > self.highestStreamID { self.highestStreamID = streamID }
                guard !HTTP2FieldCheck.isMalformed(request: headers.headers) else {
                    self.resetMalformed(streamID, context: context)
                    return
                }
                self.pending[streamID] = PendingRequest(headers: headers.headers)
            } else if HTTP2FieldCheck.isMalformed(trailers: headers.headers) {
                self.pending[streamID] = nil
                self.resetMalformed(streamID, context: context)
                return
            }
            if headers.endStream { self.finish(streamID, context: context) }
        case .data(let data):
            guard self.pending[streamID] != nil else { return }
            if case .byteBuffer(var bytes) = data.data, bytes.readableBytes > 0 {
                self.pending[streamID]!.append(&bytes)
            }
            if data.endStream { self.finish(streamID, context: context) }
        case .rstStream:
            self.pending[streamID] = nil
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if self.needsFlush {
            self.needsFlush = false
            context.flush()
        }
        if self.quiescing, self.pending.isEmpty {
            context.close(promise: nil)
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let event as NIOHTTP2WindowUpdatedEvent:
            self.windowChanged(event, context: context)
        case let event as StreamClosedEvent:
            self.pending[event.streamID] = nil
        case is ChannelShouldQuiesceEvent:
            // Graceful shutdown: no new streams, close once the open ones are answered.
            self.quiescing = true
            let goAway = HTTP2Frame(
                streamID: .rootStream,
                payload: .goAway(lastStreamID: self.highestStreamID, errorCode: .noError, opaqueData: nil)
            )
            context.writeAndFlush(self.wrapOutboundOut(goAway), promise: nil)
            if self.pending.isEmpty { context.close(promise: nil) }
        case let event as ChannelEvent where event == .inputClosed:
            context.close(promise: nil)
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2 has answered its own errors (RST_STREAM for a stream's, GOAWAY for the connection's, after
        // which the peer closes); a TLS failure ends the connection here.
        if error is NIOSSLError { context.close(promise: nil) }
    }

    /// A malformed request (RFC 9113 § 8.1.1): the stream is reset with PROTOCOL_ERROR, as NIOHTTP2 resets it
    /// when it checks header blocks itself.
    private func resetMalformed(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        let frame = HTTP2Frame(streamID: streamID, payload: .rstStream(.protocolError))
        context.write(self.wrapOutboundOut(frame), promise: nil)
        self.needsFlush = true
    }

    /// Returns flow-control window as NIOHTTP2's multiplexer does: to the target once half of it is used.
    private func windowChanged(_ event: NIOHTTP2WindowUpdatedEvent, context: ChannelHandlerContext) {
        guard let window = event.inboundWindowSize else { return }
        if event.streamID != .rootStream, self.pending[event.streamID] == nil { return }
        let target = Self.targetWindowSize
        let increment: Int
        if window < 0 {
            increment = min(-window + target, Int(Int32.max))
        } else if window < target, target - window >= window {
            increment = target - window
        } else {
            return
        }
        let frame = HTTP2Frame(streamID: event.streamID, payload: .windowUpdate(windowSizeIncrement: increment))
        context.write(self.wrapOutboundOut(frame), promise: nil)
        self.needsFlush = true
    }

    /// The request on `streamID` has ended: judge it and write the answer.
    private func finish(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let request = self.pending.removeValue(forKey: streamID) else { return }
        var method = ""
        var path = ""
        var authorization: String?
        var apnsHeaders: [String: String] = [:]
        apnsHeaders.reserveCapacity(request.headers.count)
        for (name, value, _) in request.headers {
            if name.utf8.first == UInt8(ascii: ":") {
                if name == ":method" { method = value } else if name == ":path" { path = value }
            } else if name.hasPrefix("apns-") {
                apnsHeaders[name] = value
            } else if name == "authorization", authorization == nil {
                authorization = value
            }
        }
        let apnsID = apnsHeaders["apns-id"] ?? UUID().uuidString.lowercased()

        guard let token = Self.deviceToken(inPath: path) else {
            self.respond(streamID, status: 404, reason: "BadPath", apnsID: apnsID, context: context)
            return
        }
        guard method == "POST" else {
            self.respond(streamID, status: 405, reason: "MethodNotAllowed", apnsID: apnsID, context: context)
            return
        }
        let body = request.body.map { Array($0.readableBytesView) } ?? []
        let verdict = self.emulator.judge(
            token: token, headers: apnsHeaders, authorization: authorization, body: body,
            clientCertificateUserID: { self.clientCertificateUserID(context: context) }
        )
        self.respond(streamID, status: verdict.status, reason: verdict.reason, apnsID: apnsID, context: context)
    }

    /// `<token>` of `/3/device/<token>` (a query is ignored), or nil for any other path.
    static func deviceToken(inPath path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes in
            let prefix = "/3/device/".utf8
            guard bytes.starts(with: prefix) else { return nil }
            var token = UnsafeBufferPointer(rebasing: bytes[prefix.count...])
            if let query = token.firstIndex(of: UInt8(ascii: "?")) { token = UnsafeBufferPointer(rebasing: token[..<query]) }
            guard !token.isEmpty, !token.contains(UInt8(ascii: "/")) else { return nil }
            return String(decoding: token, as: UTF8.self)
        }
    }

    /// Writes APNs' answer: HEADERS ending the stream for a 200, else HEADERS and one JSON DATA frame
    /// ending it (never an empty DATA frame: aioapns parses every DATA frame as JSON).
    private func respond(_ streamID: HTTP2StreamID, status: Int, reason: String?, apnsID: String, context: ChannelHandlerContext) {
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(status))
        // A new value on every response: not worth a place in the peer's HPACK table.
        headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
        guard let reason else {
            let frame = HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))
            context.write(self.wrapOutboundOut(frame), promise: nil)
            self.needsFlush = true
            return
        }
        let body = ByteBuffer(bytes: Self.errorBody(reason: reason))
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(body.readableBytes))
        let head = HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))
        let data = HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))
        context.write(self.wrapOutboundOut(head), promise: nil)
        context.write(self.wrapOutboundOut(data), promise: nil)
        self.needsFlush = true
    }

    /// `{"reason":"…"}`, with the time in milliseconds (`timestamp`) for `Unregistered`, as APNs answers.
    static func errorBody(reason: String, now: Date = Date()) -> [UInt8] {
        var text = #"{"reason":""# + reason + "\""
        if reason == "Unregistered" { text += #","timestamp":"# + String(Int64(now.timeIntervalSince1970 * 1000)) }
        return Array((text + "}").utf8)
    }

    /// The subject UID of the client certificate the connection presented (verified against the CA by
    /// TLS), or nil without one; looked up once per connection.
    private func clientCertificateUserID(context: ChannelHandlerContext) -> String? {
        if let known = self.certificateUserID { return known }
        let der = try? context.pipeline.syncOperations.handler(type: NIOSSLHandler.self).peerCertificate?.toDERBytes()
        let userID = der.flatMap { SandboxCertificateAuthority.userID(ofDER: $0) }
        self.certificateUserID = .some(userID)
        return userID
    }
}

extension APNsEmulatorConnectionHandler.PendingRequest {
    /// Appends a DATA frame's bytes, keeping at most ``APNsEmulatorConnectionHandler/maximumKeptBody`` + 1
    /// (enough for the size check to refuse it).
    fileprivate mutating func append(_ bytes: inout ByteBuffer) {
        guard var body = self.body else {
            self.body = bytes
            return
        }
        self.body = nil
        let room = APNsEmulatorConnectionHandler.maximumKeptBody + 1 - body.readableBytes
        if room > 0 {
            var slice = bytes.readSlice(length: min(room, bytes.readableBytes))!
            body.writeBuffer(&slice)
        }
        self.body = body
    }
}
