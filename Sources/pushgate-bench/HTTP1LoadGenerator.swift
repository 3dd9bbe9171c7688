import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A closed-loop HTTP/1.1 load generator in the manner of `wrk`: `concurrency` keep-alive connections,
/// each sending its next request as soon as the previous answer has arrived, written straight on the
/// event loops (no task per request), so the generator's own cost stays small next to the gateway's.
struct HTTP1LoadGenerator: Sendable {
    /// Makes the request for operation `index`: its head and body.
    typealias RequestMaker = @Sendable (Int) -> (HTTPRequestHead, ByteBuffer)

    let host: String
    let port: Int

    /// Sends `count` requests over `concurrency` connections, recording each request's latency and status
    /// in `recorder` when given; returns when every request has been answered (or its connection failed,
    /// recorded as `transport_error`).
    func run(count: Int, concurrency: Int, recorder: LatencyRecorder?, request: @escaping RequestMaker) async throws {
        let indices = Atomic<Int>(0)
        let next: @Sendable () -> Int? = {
            let index = indices.wrappingAdd(1, ordering: .relaxed).oldValue
            return index < count ? index : nil
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<min(concurrency, count) {
                group.addTask {
                    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                        .connect(host: self.host, port: self.port) { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                                try channel.pipeline.syncOperations.addHandler(
                                    LoadConnectionHandler(next: next, request: request, recorder: recorder)
                                )
                                return channel
                            }
                        }
                    try await channel.closeFuture.get()
                }
            }
            try await group.waitForAll()
        }
    }
}

/// One connection of the generator: request, wait for the whole answer, record, next.
private final class LoadConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let next: @Sendable () -> Int?
    private let request: HTTP1LoadGenerator.RequestMaker
    private let recorder: LatencyRecorder?
    private var started = ContinuousClock.now
    private var status = ""

    init(next: @escaping @Sendable () -> Int?, request: @escaping HTTP1LoadGenerator.RequestMaker, recorder: LatencyRecorder?) {
        self.next = next
        self.request = request
        self.recorder = recorder
    }

    func channelActive(context: ChannelHandlerContext) {
        self.sendNext(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.status = String(head.status.code)
        case .body:
            break
        case .end:
            self.recorder?.record(ContinuousClock.now - self.started, outcome: self.status)
            self.sendNext(context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.recorder?.record(ContinuousClock.now - self.started, outcome: "transport_error")
        context.close(promise: nil)
    }

    private func sendNext(context: ChannelHandlerContext) {
        guard let index = self.next() else {
            context.close(promise: nil)
            return
        }
        self.status = ""
        self.started = .now
        let (head, body) = self.request(index)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }
}

extension HTTP1LoadGenerator {
    /// A `POST` of `body` to `path` with a JSON content type.
    static func jsonPost(path: String, host: String, body: String) -> (HTTPRequestHead, ByteBuffer) {
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
        head.headers.add(name: "Host", value: host)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: String(body.utf8.count))
        return (head, ByteBuffer(string: body))
    }
}
