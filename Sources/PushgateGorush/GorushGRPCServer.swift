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

    func run() async throws {
        let address: GRPCNIOTransportCore.SocketAddress = self.host.contains(":") ? .ipv6(host: self.host, port: self.port) : .ipv4(host: self.host, port: self.port)
        let transport = HTTP2ServerTransport.Posix(address: address, transportSecurity: .plaintext)
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
