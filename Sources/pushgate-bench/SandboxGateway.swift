import Foundation
import Logging
import PushgateConfig
import PushgateServer
import ServiceLifecycle
import Synchronization

/// A gateway in this process with no apps configured, so it runs the built-in sandbox: one demo app per
/// provider, delivering to the emulators over loopback (APNs over TLS and HTTP/2).
struct SandboxGateway {
    let gateway: Gateway
    let port: Int
    let directory: URL

    /// The demo tokens, and tokens that make each emulator fail.
    var apnsToken: String { String(repeating: "a1", count: 32) }
    var fcmToken: String { "demo-fcm-registration-token" }
    var webPushSubscription: String {
        (try? String(contentsOf: self.directory.appendingPathComponent("webpush-subscription.json"), encoding: .utf8)) ?? ""
    }
    func failureTokens(for app: String) -> [String] {
        switch app {
        case "demo.apns": ["dead", "bad0", "4290", "5000"].map { $0 + String(repeating: "0", count: 60) }
        case "demo.fcm": ["unregistered-1", "badtoken-1", "quota-1", "unavailable-1"]
        default: ["gone", "missing", "throttled", "failing"].map { self.webPushSubscription.replacingOccurrences(of: "/push/demo", with: "/push/\($0)") }
        }
    }
    func token(for app: String) -> String {
        switch app {
        case "demo.apns": self.apnsToken
        case "demo.fcm": self.fcmToken
        default: self.webPushSubscription
        }
    }

    /// Runs `body` against a sandboxed gateway.
    /// - Parameters:
    ///   - database: the store (default: SQLite in a temporary directory).
    ///   - nextcloud: the Nextcloud front end's settings (default: none, so it refuses devices).
    static func with(
        database: DatabaseSettings? = nil,
        nextcloud: NextcloudSettings = NextcloudSettings(),
        _ body: (SandboxGateway) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = GatewayConfiguration()
        configuration.http.port = 0
        configuration.database = database ?? .sqlite(path: directory.appendingPathComponent("store.sqlite").path)
        configuration.nextcloud = nextcloud
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let port = Mutex(0)
        let gateway = try await Gateway.build(configuration: configuration, logger: logger, sandboxDirectory: directory) { name, _, bound in
            if name == "http" { port.withLock { $0 = bound } }
        }
        let services = gateway.serviceGroup()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await services.run() }
            while port.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            do {
                try await body(SandboxGateway(gateway: gateway, port: port.withLock { $0 }, directory: directory))
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
