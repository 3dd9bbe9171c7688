import Hummingbird
import HummingbirdTLS
public import Logging
import NIOCore
public import ServiceLifecycle

/// Runs an ``FCMEmulator`` as a Hummingbird server (HTTP/1.1, over TLS when given a certificate), as a
/// service.
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
    public func run() async throws {
        let onRunning = self.onRunning
        let configuration = ApplicationConfiguration(address: .hostname(self.host, port: self.port), serverName: "pushgate-sandbox-fcm")
        let running: @Sendable (any Channel) async -> Void = { channel in await onRunning(channel.localAddress?.port ?? 0) }
        if let certificate = self.certificate {
            let application = Application(
                router: self.emulator.buildRouter(),
                server: try .tls(.http1(), tlsConfiguration: try certificate.serverTLSConfiguration()),
                configuration: configuration,
                onServerRunning: running,
                logger: self.logger
            )
            try await application.run()
        } else {
            let application = Application(
                router: self.emulator.buildRouter(),
                server: .http1(),
                configuration: configuration,
                onServerRunning: running,
                logger: self.logger
            )
            try await application.run()
        }
    }
}
