import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import NIOCore
import PushgateHTTP
import ServiceLifecycle

/// The gRPC listener of the gorush front end (`gorush.grpc`), as a service: it serves until graceful
/// shutdown, then lets RPCs in flight finish. It logs `listening` with the bound port, as the HTTP
/// listeners do.
struct GorushGRPCServer: Service, CustomStringConvertible {
    let host: String
    let port: Int
    let services: [any RegistrableRPCService]
    /// The gateway's one cap on open connections, which this listener's count against too.
    let connections: OpenConnections
    var limits = GRPCConnectionGuard.Limits()
    /// How long after a graceful stop begins the connections still open are closed (calls on them
    /// included): the transport waits for each client to answer its PING, which one that never does would
    /// make it wait until the gateway's whole stop is cut short.
    var shutdownGrace: Duration = .seconds(20)
    let logger: Logger

    var description: String { "GorushGRPCServer(\(self.host):\(self.port))" }

    /// Every wait bounded, as the HTTP listener's: a connection without calls is asked to go (GOAWAY)
    /// after 5 minutes, any connection after 30 minutes, a peer that stops answering is found by a PING
    /// after a minute of silence, and a connection carries at most 256 calls at once. The transport closes
    /// such a connection only once the client answers its PING; ``GRPCConnectionGuard`` closes one whose
    /// client has said nothing for 3 minutes (10 s before its first byte), and counts every connection
    /// against the gateway's cap.
    static func transportConfig(guarding limits: GRPCConnectionGuard.Limits, connections: OpenConnections, open: GRPCOpenChannels)
        -> HTTP2ServerTransport.Posix.Config
    {
        HTTP2ServerTransport.Posix.Config.defaults { config in
            config.connection.maxIdleTime = .seconds(300)
            config.connection.maxAge = .seconds(1_800)
            config.connection.maxGraceTime = .seconds(30)
            config.connection.keepalive.time = .seconds(60)
            config.connection.keepalive.timeout = .seconds(20)
            config.http2.maxConcurrentStreams = 256
            config.channelDebuggingCallbacks.onAcceptTCPConnection = { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(GRPCConnectionGuard(limits: limits, connections: connections, open: open), position: .first)
                }
            }
        }
    }

    func run() async throws {
        let address: GRPCNIOTransportCore.SocketAddress = self.host.contains(":") ? .ipv6(host: self.host, port: self.port) : .ipv4(host: self.host, port: self.port)
        let open = GRPCOpenChannels()
        let config = Self.transportConfig(guarding: self.limits, connections: self.connections, open: open)
        let transport = HTTP2ServerTransport.Posix(address: address, transportSecurity: .plaintext, config: config)
        let server = GRPCServer(transport: transport, services: self.services)
        let grace = self.shutdownGrace
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.serve() }
                let listening = try await transport.listeningAddress
                if let bound = listening.ipv4?.port ?? listening.ipv6?.port {
                    self.logger.notice("listening", metadata: ["listener": "grpc", "address": "\(self.host)", "port": "\(bound)"])
                }
                try await group.waitForAll()
            }
        } onGracefulShutdown: {
            server.beginGracefulShutdown()
            Task {
                try? await Task.sleep(for: grace)
                open.closeAll()
            }
        }
    }
}
