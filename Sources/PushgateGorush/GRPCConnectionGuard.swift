import NIOCore
import PushgateHTTP
import Synchronization

/// The first handler of every gorush gRPC connection: it counts the connection against the gateway's one
/// cap (``OpenConnections``; over it, the connection is closed at once), and closes one whose client has
/// sent nothing for too long: nothing at all within ``Limits/firstBytes`` of connecting, then nothing for
/// ``Limits/silence`` (a client that is alive answers the server's keepalive PING every minute). The gRPC
/// transport alone keeps such a connection for good: its idle and keepalive timers send GOAWAY and a PING,
/// and only an answer to that PING starts the countdown to closing.
final class GRPCConnectionGuard: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// How long a client may stay silent.
    struct Limits: Sendable {
        /// From connecting to the first byte (the HTTP/2 preface).
        var firstBytes: TimeAmount = .seconds(10)
        /// Between bytes afterwards: twice the keepalive interval (60 s) and its timeout (20 s), and more.
        var silence: TimeAmount = .seconds(180)
    }

    private let limits: Limits
    private let connections: OpenConnections
    private let open: GRPCOpenChannels
    private var counted = false
    private var heardFrom = false
    private var lastHeard = NIODeadline.now()
    private var timer: Scheduled<Void>?

    init(limits: Limits, connections: OpenConnections, open: GRPCOpenChannels) {
        self.limits = limits
        self.connections = connections
        self.open = open
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard self.connections.open() else {
            context.close(promise: nil)
            return
        }
        self.counted = true
        self.open.add(context.channel)
        self.lastHeard = .now()
        self.schedule(context: context, at: self.lastHeard + self.limits.firstBytes)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.release(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.release(context: context)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.heardFrom = true
        self.lastHeard = .now()
        context.fireChannelRead(data)
    }

    private func release(context: ChannelHandlerContext) {
        self.timer?.cancel()
        self.timer = nil
        guard self.counted else { return }
        self.counted = false
        self.connections.close()
        self.open.remove(context.channel)
    }

    /// Checks at `deadline` whether the client was heard from in time; closes the connection if not.
    private func schedule(context: ChannelHandlerContext, at deadline: NIODeadline) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.timer = nil
            guard handler.counted else { return }
            let limit = handler.heardFrom ? handler.limits.silence : handler.limits.firstBytes
            let due = handler.lastHeard + limit
            if NIODeadline.now() >= due {
                context.close(promise: nil)
            } else {
                handler.schedule(context: context, at: due)
            }
        }
    }
}

/// The gRPC listener's open connections, for closing those still open a while after a graceful stop
/// began (a client that never answers the server's PING keeps its connection, and the stop, waiting).
final class GRPCOpenChannels: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        self.channels.withLock { $0[ObjectIdentifier(channel)] = channel }
    }

    func remove(_ channel: any Channel) {
        self.channels.withLock { $0[ObjectIdentifier(channel)] = nil }
    }

    /// Closes every connection still open.
    func closeAll() {
        for channel in self.channels.withLock({ Array($0.values) }) { channel.close(promise: nil) }
    }
}
