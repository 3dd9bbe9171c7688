import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushgateSandbox

/// An HTTP/2 server over TLS (the sandbox CA's server certificate) that answers each request as its script
/// says, for the connection behaviours the emulator never shows: GOAWAY, silence.
final class ScriptedHTTP2Server: Sendable {
    /// What the server does with a request, given the connection's number (0 for the first).
    enum Action: Sendable {
        /// `200` with an empty body.
        case answer
        /// GOAWAY with last stream 0 (nothing processed), then close.
        case goAway
        /// Nothing at all.
        case ignore
        /// `200` to the server's first `count` requests (on any connection), nothing to the others.
        case answerFirst(Int)
        /// The connection is accepted and then nothing at all: no TLS handshake, no SETTINGS (a proxy
        /// whose upstream is gone, a hung load balancer).
        case mute
    }

    struct Record: Sendable {
        var connections = 0
        var requests = 0
        var resets = 0
        /// Muted connections the client closed.
        var mutedClosed = 0
    }

    let record = LockedValue(Record())
    private let channel: any Channel
    var port: Int { self.channel.localAddress?.port ?? 0 }

    init(authority: SandboxCertificateAuthority, script: @escaping @Sendable (_ connection: Int) -> Action) async throws {
        let context = try NIOSSLContext(configuration: authority.makeServerTLSConfiguration())
        let record = self.record
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let number = record.withLock { record in
                        record.connections += 1
                        return record.connections - 1
                    }
                    let pipeline = channel.pipeline.syncOperations
                    let action = script(number)
                    if case .mute = action {
                        channel.closeFuture.whenComplete { _ in record.withLock { $0.mutedClosed += 1 } }
                        return
                    }
                    try pipeline.addHandler(NIOSSLServerHandler(context: context))
                    try pipeline.addHandler(NIOHTTP2Handler(mode: .server))
                    try pipeline.addHandler(ScriptedStreamHandler(action: action, record: record))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func close() async throws {
        try await self.channel.close()
    }
}

private final class ScriptedStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    let action: ScriptedHTTP2Server.Action
    let record: LockedValue<ScriptedHTTP2Server.Record>

    init(action: ScriptedHTTP2Server.Action, record: LockedValue<ScriptedHTTP2Server.Record>) {
        self.action = action
        self.record = record
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        let ended: Bool
        switch frame.payload {
        case .headers(let headers): ended = headers.endStream
        case .data(let data): ended = data.endStream
        case .rstStream:
            self.record.withLock { $0.resets += 1 }
            return
        default: return
        }
        guard ended else { return }
        let number = self.record.withLock { record in
            record.requests += 1
            return record.requests
        }
        switch self.action {
        case .answerFirst(let count) where number > count:
            break
        case .answer, .answerFirst:
            let headers = HPACKHeaders([(":status", "200"), ("apns-id", "00000000-0000-0000-0000-000000000000")])
            context.writeAndFlush(self.wrapOutboundOut(HTTP2Frame(streamID: frame.streamID, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
        case .goAway:
            let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))
            context.writeAndFlush(self.wrapOutboundOut(goAway)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .ignore, .mute:
            break
        }
    }
}
