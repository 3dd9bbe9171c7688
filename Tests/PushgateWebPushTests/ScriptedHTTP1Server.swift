import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A push service stand-in for the connection pool's tests: HTTP/1.1 (over TLS when given a context),
/// answering each request as its script says and recording connections and request heads.
final class ScriptedHTTP1Server: Sendable {
    /// What the server does with a request, given its number (0 for the first, over all connections).
    enum Action: Sendable {
        /// `status` with `body`; `close` adds `Connection: close` and closes after answering.
        case answer(status: Int, body: String, close: Bool)
        /// `status` with an empty body, `delay` after the request ended.
        case answerLater(status: Int, delay: TimeAmount)
        /// Nothing at all.
        case ignore
        /// Closes the connection at once, without answering.
        case hangUp
        /// Sends the head of a 201 answer whose body never comes, then closes the connection.
        case headThenHangUp
    }

    struct Record: Sendable {
        var connections = 0
        /// Connections that have closed (either side).
        var closedConnections = 0
        var heads: [HTTPRequestHead] = []
        var bodies: [Int] = []
    }

    private let channel: any Channel
    private let server: ServerState
    var port: Int { self.channel.localAddress?.port ?? 0 }

    init(tls: NIOSSLContext? = nil, script: @escaping @Sendable (Int) -> Action) async throws {
        let server = ServerState()
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    server.connectionOpened()
                    let pipeline = channel.pipeline.syncOperations
                    if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
                    try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: false)
                    try pipeline.addHandler(ScriptedHTTP1Handler(server: server, script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        self.server = server
    }

    /// What the server has seen so far.
    var snapshot: Record { self.server.snapshot }

    func close() async throws {
        try await self.channel.close()
    }
}

/// The server's shared record.
final class ServerState: Sendable {
    private let record = Mutex(ScriptedHTTP1Server.Record())

    var snapshot: ScriptedHTTP1Server.Record { self.record.withLock { $0 } }

    func connectionOpened() { self.record.withLock { $0.connections += 1 } }

    func connectionClosed() { self.record.withLock { $0.closedConnections += 1 } }

    /// Records a request and returns its number.
    func requestArrived(_ head: HTTPRequestHead, bodyBytes: Int) -> Int {
        self.record.withLock { record in
            record.heads.append(head)
            record.bodies.append(bodyBytes)
            return record.heads.count - 1
        }
    }
}

private final class ScriptedHTTP1Handler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let server: ServerState
    let script: @Sendable (Int) -> ScriptedHTTP1Server.Action
    private var head: HTTPRequestHead?
    private var bodyBytes = 0

    init(server: ServerState, script: @escaping @Sendable (Int) -> ScriptedHTTP1Server.Action) {
        self.server = server
        self.script = script
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.server.connectionClosed()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            self.bodyBytes = 0
        case .body(let bytes):
            self.bodyBytes += bytes.readableBytes
        case .end:
            guard let head = self.head else { return }
            let number = self.server.requestArrived(head, bodyBytes: self.bodyBytes)
            switch self.script(number) {
            case .answer(let status, let body, let close):
                var headers = HTTPHeaders([("Content-Length", String(body.utf8.count))])
                if close { headers.add(name: "Connection", value: "close") }
                context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers))), promise: nil)
                context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
                context.writeAndFlush(self.wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
                    if close { context.close(promise: nil) }
                }
            case .answerLater(let status, let delay):
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: delay) {
                    let (handler, context) = loopBound.value
                    let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: ["Content-Length": "0"])
                    context.write(handler.wrapOutboundOut(.head(head)), promise: nil)
                    context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                }
            case .ignore:
                break
            case .hangUp:
                context.close(promise: nil)
            case .headThenHangUp:
                let head = HTTPResponseHead(version: .http1_1, status: .created, headers: ["Content-Length": "10"])
                context.writeAndFlush(self.wrapOutboundOut(.head(head))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            }
        }
    }
}
