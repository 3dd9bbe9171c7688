import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import ServiceLifecycle

/// The gRPC listener of the gorush front end (`gorush.grpc`), as a service: it serves until graceful
/// shutdown, then lets RPCs in flight finish. It logs `listening` with the bound port, as the HTTP
/// listeners do.
struct GorushGRPCServer: Service, CustomStringConvertible {
    let host: String
    let port: Int
    let services: [any RegistrableRPCService]
    let logger: Logger

    var description: String { "GorushGRPCServer(\(self.host):\(self.port))" }

    /// Every wait bounded, as the HTTP listener's: a connection without calls is closed after 5 minutes,
    /// any connection is asked to go (GOAWAY) after 30 minutes and closed 30 s later whatever it still
    /// carries (a call whose client never sends its message included), a peer that stops answering is
    /// found by a PING after a minute of silence, and a connection carries at most 256 calls at once.
    static let transportConfig = HTTP2ServerTransport.Posix.Config.defaults { config in
        config.connection.maxIdleTime = .seconds(300)
        config.connection.maxAge = .seconds(1_800)
        config.connection.maxGraceTime = .seconds(30)
        config.connection.keepalive.time = .seconds(60)
        config.connection.keepalive.timeout = .seconds(20)
        config.http2.maxConcurrentStreams = 256
    }

    func run() async throws {
        let address: GRPCNIOTransportCore.SocketAddress = self.host.contains(":") ? .ipv6(host: self.host, port: self.port) : .ipv4(host: self.host, port: self.port)
        let transport = HTTP2ServerTransport.Posix(address: address, transportSecurity: .plaintext, config: Self.transportConfig)
        let server = GRPCServer(transport: transport, services: self.services)
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
        }
    }
}
