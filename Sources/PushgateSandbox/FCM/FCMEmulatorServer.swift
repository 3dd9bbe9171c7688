import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import NIOSSL
public import ServiceLifecycle

/// Runs an ``FCMEmulator`` as an HTTP/1.1 server (over TLS when given a certificate) on SwiftNIO handlers,
/// as a service.
///
/// ```swift
/// let server = FCMEmulatorServer(emulator: emulator, host: "127.0.0.1", port: 0) { port in
///     try? emulator.writeServiceAccount(baseURL: "http://127.0.0.1:\(port)", to: path)
/// }
/// ```
public struct FCMEmulatorServer: Service {
    /// The emulator it serves.
    public let emulator: FCMEmulator
    /// The address to bind.
    public let host: String
    /// The port to bind (0 picks a free one, reported to `onRunning`).
    public let port: Int
    /// The certificate to serve HTTPS with; nil serves plain HTTP.
    public let certificate: FCMEmulatorCertificate?
    private let logger: Logger
    private let onRunning: @Sendable (Int) async -> Void

    /// Creates the server.
    /// - Parameters:
    ///   - emulator: the emulator to serve.
    ///   - host: the address to bind, such as `127.0.0.1`.
    ///   - port: the port, 0 for any free one.
    ///   - certificate: serve HTTPS with this certificate (nil: plain HTTP).
    ///   - logger: the server's logger.
    ///   - onRunning: called with the bound port once the server listens.
    public init(
        emulator: FCMEmulator, host: String = "127.0.0.1", port: Int = 0, certificate: FCMEmulatorCertificate? = nil, logger: Logger = Logger(label: "pushgate.sandbox.fcm"),
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.emulator = emulator
        self.host = host
        self.port = port
        self.certificate = certificate
        self.logger = logger
        self.onRunning = onRunning
    }

    /// Serves until graceful shutdown.
    ///
    /// Each connection is served by SwiftNIO handlers on its event loop (``SandboxHTTP1ServerChannel``):
    /// TLS when a certificate is given, NIO's HTTP/1 server pipeline, and a handler that answers each
    /// request as it ends, without a task per request. Hummingbird binds, reports the port and shuts down
    /// gracefully; its router is not used.
    public func run() async throws {
        let onRunning = self.onRunning
        let configuration = ApplicationConfiguration(address: .hostname(self.host, port: self.port), serverName: "pushgate-sandbox-fcm")
        let running: @Sendable (any Channel) async -> Void = { channel in await onRunning(channel.localAddress?.port ?? 0) }
        let sslContext = try self.certificate.map { try NIOSSLContext(configuration: try $0.serverTLSConfiguration()) }
        let emulator = self.emulator
        let application = Application(
            router: Router(),
            server: HTTPServerBuilder { _ in SandboxHTTP1ServerChannel(sslContext: sslContext) { FCMEmulatorConnectionHandler(emulator: emulator) } },
            configuration: configuration,
            onServerRunning: running,
            logger: self.logger
        )
        try await application.run()
    }
}
