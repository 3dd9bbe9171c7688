import NIOCore
import NIOPosix

/// An HTTP proxy that serves CONNECT only: it reads the request head, records it, connects to the target it
/// names, answers `200 Connection Established`, then copies bytes both ways.
final class ConnectProxy: Sendable {
    /// The request heads received (request line and headers, as text).
    let heads = LockedValue<[String]>([])
    private let channel: any Channel
    var port: Int { self.channel.localAddress?.port ?? 0 }

    init() async throws {
        let heads = self.heads
        self.channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.allowRemoteHalfClosure, value: false)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ConnectHandler(heads: heads))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func close() async throws {
        try await self.channel.close()
    }
}

/// Reads the CONNECT head, then relays.
private final class ConnectHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let heads: LockedValue<[String]>
    private var head = ByteBuffer()
    private var partner: (any Channel)?
    private var pending: [ByteBuffer] = []
    private var connecting = false

    init(heads: LockedValue<[String]>) {
        self.heads = heads
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        if let partner = self.partner {
            partner.writeAndFlush(bytes, promise: nil)
            return
        }
        if self.connecting {
            self.pending.append(bytes)
            return
        }
        self.head.writeBuffer(&bytes)
        let view = Array(self.head.readableBytesView)
        guard let end = (0..<max(0, view.count - 3)).first(where: { view[$0..<$0 + 4].elementsEqual("\r\n\r\n".utf8) }) else { return }
        let headText = String(decoding: view[..<end], as: UTF8.self)
        self.heads.withLock { $0.append(headText) }
        if end + 4 < view.count { self.pending.append(ByteBuffer(bytes: view[(end + 4)...])) }
        let target = headText.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        guard headText.hasPrefix("CONNECT "), let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
            context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 400 Bad Request\r\n\r\n")), promise: nil)
            context.close(promise: nil)
            return
        }
        self.connecting = true
        let inbound = context.channel
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { outbound in
                outbound.eventLoop.makeCompletedFuture {
                    try outbound.pipeline.syncOperations.addHandler(RelayHandler(partner: inbound))
                }
            }
            .connect(host: String(target[..<colon]), port: port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let outbound):
                    self.partner = outbound
                    self.connecting = false
                    context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")), promise: nil)
                    for buffer in self.pending { outbound.writeAndFlush(buffer, promise: nil) }
                    self.pending = []
                case .failure:
                    context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 502 Bad Gateway\r\n\r\n")), promise: nil)
                    context.close(promise: nil)
                }
            }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.partner?.close(promise: nil)
    }
}

/// Copies what the target sends back to the client.
private final class RelayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.partner.writeAndFlush(self.unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.partner.close(promise: nil)
    }
}
