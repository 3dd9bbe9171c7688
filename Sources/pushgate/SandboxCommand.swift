import ArgumentParser
import Foundation
import Logging
import PushgateSandbox
import ServiceLifecycle
import UnixSignals

/// `pushgate sandbox`: the provider emulators on loopback, with ready-made credentials.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Run emulators of APNs, FCM, Web Push, Huawei Push Kit and a UnifiedPush distributor on loopback, and write credentials and an example configuration for them.",
        discussion: "Every delivery is recorded: GET /sandbox/deliveries on the Web Push emulator's port lists them. SIGTERM or SIGINT stops it."
    )

    @Option(help: ArgumentHelp("Where to write the credentials and pushgate-sandbox.yaml.", valueName: "dir"))
    var directory: String = "pushgate-sandbox"

    @Option(help: "The loopback address to listen on.") var host: String = "127.0.0.1"

    @Option(help: "How many messages each emulated Waku node's relay cache holds (nwaku's --rest-relay-cache-capacity).")
    var wakuCacheCapacity: Int = 1_000

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .notice
            return handler
        }
        let logger = Logger(label: "pushgate.sandbox")
        let environment = try SandboxEnvironment.prepare(
            directory: URL(fileURLWithPath: self.directory), host: self.host, wakuCacheCapacity: self.wakuCacheCapacity, logger: logger
        )
        // Written straight to the file descriptor: print() would sit in a buffer when stdout is a pipe.
        FileHandle.standardOutput.write(Data("""
            APNs emulator:     https://\(self.host):\(environment.apnsPort) (CA: \(self.directory)/sandbox-ca.pem)
            FCM emulator:      http://\(self.host):\(environment.fcmPort)
            Web Push emulator: http://\(self.host):\(environment.webPushPort)
            HMS emulator:      http://\(self.host):\(environment.hmsPort)
            UnifiedPush:       \(environment.unifiedPushURL) (demo endpoint: \(environment.demoUnifiedPushEndpoint))
            Waku REST nodes:   \(environment.wakuServerURL) (for the gateway), \(environment.wakuClientURL) (for clients)
            Deliveries:        http://\(self.host):\(environment.webPushPort)/sandbox/deliveries
            Configuration:     \(self.directory)/pushgate-sandbox.yaml
            Try: pushgate send --config \(self.directory)/pushgate-sandbox.yaml --app demo.apns --token \(environment.demoAPNsToken) --alert hello

            """.utf8))
        let group = ServiceGroup(
            configuration: .init(
                // One emulator that fails stops the others gracefully (see Gateway.serviceGroup).
                services: try environment.services().map { .init(service: $0, failureTerminationBehavior: .gracefullyShutdownGroup) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
            )
        )
        try await group.run()
    }
}
