import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// How the FCM emulator serves one TCP connection: optional TLS, NIO's HTTP/1 server pipeline
/// (`configureHTTPServerPipeline`: parsing, keep-alive, pipelining order, 400 on malformed requests), then
/// ``FCMEmulatorConnectionHandler``, which collects each request and answers it on the event loop. There
/// is no task per request.
///
/// A Hummingbird server child channel, so the emulator still runs as a Hummingbird `Application` (binding,
/// `onServerRunning`, graceful shutdown through `ChannelShouldQuiesceEvent`, which NIO's pipeline handler
/// honours: idle connections close, busy ones after their answer).
struct FCMEmulatorServerChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
    }

    let emulator: FCMEmulator
    let sslContext: NIOSSLContext?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: false)
            let pipeline = channel.pipeline.syncOperations
            if let sslContext = self.sslContext {
                try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
            }
            try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
            try pipeline.addHandler(FCMEmulatorConnectionHandler(emulator: self.emulator))
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

/// Collects an HTTP/1 request (head and body) and answers it with ``FCMEmulator/tokenReply(form:host:now:)``
/// or ``FCMEmulator``'s send judgement once it has ended, flushing once per read. A `slow…` token's answer
/// is written by a task scheduled on the event loop after ``FCMEmulator/slowDelay``.
final class FCMEmulatorConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    enum Route: Equatable {
        case token
        case send(project: String)
    }

    private let emulator: FCMEmulator
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var bodyTooLarge = false
    private var needsFlush = false

    init(emulator: FCMEmulator) {
        self.emulator = emulator
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            self.body = nil
            self.bodyTooLarge = false
        case .body(var bytes):
            guard !self.bodyTooLarge else { return }
            if (self.body?.readableBytes ?? 0) + bytes.readableBytes > FCMEmulator.maxBodySize {
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

    /// The request has ended: route it, judge it and write the answer.
    private func finish(head: HTTPRequestHead, body: ByteBuffer?, context: ChannelHandlerContext) {
        let keepAlive = head.isKeepAlive
        guard let route = Self.route(head.uri) else {
            self.respond(status: 404, body: "", retryAfter: nil, version: head.version, keepAlive: keepAlive, context: context)
            return
        }
        guard head.method == .POST else {
            self.respond(status: 405, body: "", retryAfter: nil, version: head.version, keepAlive: keepAlive, context: context)
            return
        }
        if self.bodyTooLarge {
            self.bodyTooLarge = false
            self.respond(status: 413, body: "", retryAfter: nil, version: head.version, keepAlive: false, context: context)
            return
        }
        switch route {
        case .token:
            let form = body.map { String(buffer: $0) } ?? ""
            let reply = self.emulator.tokenReply(form: form, host: head.headers.first(name: "host"))
            self.respond(reply, version: head.version, keepAlive: keepAlive, context: context)
        case .send(let project):
            let data = body.map { Data($0.readableBytesView) } ?? Data()
            let object = FCMEmulator.jsonObject(data)
            let token = FCMEmulator.token(of: FCMEmulator.messageObject(object))
            var headers: [String: String] = [:]
            if let contentType = head.headers.first(name: "content-type") { headers["content-type"] = contentType }
            if let userAgent = head.headers.first(name: "user-agent") { headers["user-agent"] = userAgent }
            let authorization = head.headers.first(name: "authorization")
            let emulator = self.emulator
            guard emulator.isSlow(token) else {
                let reply = emulator.sendReply(project: project, authorization: authorization, headers: headers, body: data, object: object, now: nil)
                self.respond(reply, version: head.version, keepAlive: keepAlive, context: context)
                return
            }
            // Judged and answered after the delay, on the event loop (NIO's pipeline handler holds any
            // pipelined request until this answer has ended).
            let version = head.version
            let (seconds, attoseconds) = emulator.slowDelay.components
            let delay = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            let loop = context.eventLoop.assumeIsolated()
            loop.scheduleTask(in: delay) {
                let reply = emulator.sendReply(project: project, authorization: authorization, headers: headers, body: data, object: object, now: nil)
                self.respond(reply, version: version, keepAlive: keepAlive, context: context)
                self.needsFlush = false
                context.flush()
            }
        }
    }

    /// The route of `uri` (its query ignored): `/token`, `/v1/projects/{project}/messages:send`, else nil.
    static func route(_ uri: String) -> Route? {
        var path = uri.utf8[...]
        if let query = path.firstIndex(of: UInt8(ascii: "?")) { path = path[..<query] }
        if path.elementsEqual("/token".utf8) { return .token }
        let prefix = "/v1/projects/".utf8
        let suffix = "/messages:send".utf8
        guard path.count > prefix.count + suffix.count, path.starts(with: prefix), path.reversed().starts(with: suffix.reversed()) else { return nil }
        let project = path.dropFirst(prefix.count).dropLast(suffix.count)
        guard !project.contains(UInt8(ascii: "/")) else { return nil }
        let text = String(decoding: project, as: UTF8.self)
        return .send(project: project.contains(UInt8(ascii: "%")) ? (text.removingPercentEncoding ?? text) : text)
    }

    private func respond(_ reply: FCMEmulatorReply, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext) {
        self.respond(status: reply.status, body: reply.body, retryAfter: reply.retryAfter, version: version, keepAlive: keepAlive, context: context)
    }

    /// Writes a JSON answer (head, body, end); closes the connection after it unless kept alive.
    private func respond(status: Int, body: String, retryAfter: String?, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext) {
        let bytes = context.channel.allocator.buffer(string: body)
        var headers = HTTPHeaders()
        headers.reserveCapacity(4)
        headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        headers.add(name: "content-length", value: String(bytes.readableBytes))
        if let retryAfter { headers.add(name: "retry-after", value: retryAfter) }
        if !keepAlive { headers.add(name: "connection", value: "close") }
        let head = HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if bytes.readableBytes > 0 { context.write(self.wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil) }
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
