import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// How the Web Push emulator serves one TCP connection: NIO's HTTP/1 server pipeline
/// (`configureHTTPServerPipeline`: parsing, keep-alive, pipelining order, 400 on malformed requests), then
/// ``WebPushEmulatorConnectionHandler``, which collects each request and answers it on the event loop, with
/// no task per request. A Hummingbird server child channel, so Hummingbird still binds, reports the port
/// and shuts down gracefully (NIO's pipeline handler honours `ChannelShouldQuiesceEvent`).
struct WebPushEmulatorServerChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    let emulator: WebPushEmulator
    let origin: String
    let deliveries: (@Sendable () -> [UInt8])?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
            try pipeline.addHandler(WebPushEmulatorConnectionHandler(emulator: self.emulator, origin: self.origin, deliveries: self.deliveries))
            return Value(channel: channel)
        }
    }

    /// Waits for the connection to close (the handlers do all the work); cancellation closes it.
    func handle(value: Value, logger: Logger) async {
        let channel = value.channel
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}

/// Collects an HTTP/1 request and answers `POST /push/<id>` with ``WebPushEmulator``'s judgement (and
/// `GET /sandbox/deliveries` when given the log's JSON) once it has ended, flushing once per read.
final class WebPushEmulatorConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The largest request body read (larger ones are answered 413 without being judged).
    static let maxBodySize = 1 << 20

    private let emulator: WebPushEmulator
    private let origin: String
    private let deliveries: (@Sendable () -> [UInt8])?
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var bodyTooLarge = false
    private var needsFlush = false

    init(emulator: WebPushEmulator, origin: String, deliveries: (@Sendable () -> [UInt8])?) {
        self.emulator = emulator
        self.origin = origin
        self.deliveries = deliveries
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            self.body = nil
            self.bodyTooLarge = false
        case .body(var bytes):
            guard !self.bodyTooLarge else { return }
            if (self.body?.readableBytes ?? 0) + bytes.readableBytes > Self.maxBodySize {
                self.bodyTooLarge = true
                self.body = nil
            } else if self.body == nil {
                self.body = bytes
            } else {
                self.body!.writeBuffer(&bytes)
            }
        case .end:
            guard let head = self.head else { return }
            self.head = nil
            let body = self.body
            self.body = nil
            self.finish(head: head, body: body, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if self.needsFlush {
            self.needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Malformed HTTP was answered 400 by NIO's error handler; anything else ends the connection.
        context.close(promise: nil)
    }

    private func finish(head: HTTPRequestHead, body: ByteBuffer?, context: ChannelHandlerContext) {
        let keepAlive = head.isKeepAlive
        var path = head.uri.utf8[...]
        if let query = path.firstIndex(of: UInt8(ascii: "?")) { path = path[..<query] }
        if let deliveries = self.deliveries, path.elementsEqual("/sandbox/deliveries".utf8) {
            guard head.method == .GET || head.method == .HEAD else {
                self.respond(status: 405, body: [], headers: [], head: head, keepAlive: keepAlive, context: context)
                return
            }
            self.respond(status: 200, body: deliveries(), headers: [("content-type", "application/json")], head: head, keepAlive: keepAlive, context: context)
            return
        }
        let prefix = "/push/".utf8
        let id = path.dropFirst(prefix.count)
        guard path.starts(with: prefix), !id.isEmpty, !id.contains(UInt8(ascii: "/")) else {
            self.respond(status: 404, body: [], headers: [], head: head, keepAlive: keepAlive, context: context)
            return
        }
        guard head.method == .POST else {
            self.respond(status: 405, body: [], headers: [], head: head, keepAlive: keepAlive, context: context)
            return
        }
        if self.bodyTooLarge {
            self.bodyTooLarge = false
            self.respond(status: 413, body: [], headers: [], head: head, keepAlive: false, context: context)
            return
        }
        let headers = head.headers
        let answer = self.emulator.judge(
            id: String(decoding: id, as: UTF8.self),
            body: body.map { Array($0.readableBytesView) } ?? [],
            header: { name in
                let values = headers[name]
                return values.isEmpty ? nil : values.count == 1 ? values[0] : values.joined(separator: ", ")
            },
            origin: self.origin
        )
        var extra: [(String, String)] = []
        if let retryAfter = answer.retryAfter { extra.append(("retry-after", retryAfter)) }
        if let location = answer.location { extra.append(("location", location)) }
        self.respond(status: answer.status, body: Array((answer.reason ?? "").utf8), headers: extra, head: head, keepAlive: keepAlive, context: context)
    }

    /// Writes the answer (head, body, end); closes the connection after it unless kept alive.
    private func respond(
        status: Int, body: [UInt8], headers extra: [(String, String)], head request: HTTPRequestHead, keepAlive: Bool, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders(extra)
        headers.add(name: "content-length", value: String(body.count))
        if !keepAlive { headers.add(name: "connection", value: "close") }
        let head = HTTPResponseHead(version: request.version, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty, request.method != .HEAD {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        if keepAlive {
            context.write(self.wrapOutboundOut(.end(nil)), promise: nil)
            self.needsFlush = true
        } else {
            let channel = context.channel
            context.writeAndFlush(self.wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in channel.close(promise: nil) }
            self.needsFlush = false
        }
    }
}
