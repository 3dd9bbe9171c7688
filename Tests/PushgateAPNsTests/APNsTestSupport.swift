import Foundation
@_exported import PushgateTestSupport
import Logging
import PushgateAPNs
import PushgateConfig
import PushgateCore
import PushgateSandbox
import ServiceLifecycle
import ServiceLifecycleTestKit

enum TestLogging {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.apns.tests")
        logger.logLevel = .critical
        return logger
    }()
}


/// The settings of one app, read the way the gateway reads them: from YAML.
func appSettings(id: String = "im.pushgate.test", _ keys: [String: String]) throws -> AppSettings {
    var yaml = "apps:\n  '\(id)':\n    type: apns\n"
    for (key, value) in keys.sorted(by: { $0.key < $1.key }) {
        yaml += "    \(key): '\(value)'\n"
    }
    let configuration = try GatewayConfiguration(yaml: yaml)
    return configuration.apps[0]
}

/// Device tokens the emulator treats specially, padded to 64 hex digits.
func deviceToken(_ prefix: String = "") -> String {
    let filler = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    return prefix + filler.dropFirst(prefix.count)
}

/// An emulator running on a free port, with the files a provider configuration points at.
struct EmulatorHarness: Sendable {
    let emulator: APNsEmulator
    let port: Int
    let keyPath: String
    let caPath: String

    /// Token-auth settings for the emulator's app, plus `extra`.
    func settings(_ extra: [String: String] = [:]) throws -> AppSettings {
        var keys = [
            "keyfile": self.keyPath,
            "key_id": self.emulator.keyID,
            "team_id": self.emulator.teamID,
            "topic": self.emulator.bundleID,
            "base_url": "https://127.0.0.1:\(self.port)",
            "ca_file": self.caPath,
        ]
        keys.merge(extra) { _, new in new }
        return try appSettings(keys)
    }

    /// Runs an emulator while `body` runs.
    /// - Parameter now: the emulator's clock (provider tokens' ages are measured on it).
    static func withEmulator(
        now: @escaping @Sendable () -> Date = Date.init, _ body: @Sendable (EmulatorHarness) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let emulator = try APNsEmulator(bundleID: "im.pushgate.test", now: now)
        let keyPath = try directory.write("AuthKey.p8", emulator.privateKeyPEM)
        let caPath = try directory.write("ca.pem", emulator.certificateAuthority.caCertificatePEM)
        try await emulator.withRunningServer(logger: TestLogging.quiet) { port in
            try await body(EmulatorHarness(emulator: emulator, port: port, keyPath: keyPath, caPath: caPath))
        }
        _ = directory
    }

    /// Runs a provider as a service (as the gateway does) while `body` uses it, then shuts it down
    /// gracefully.
    func withProvider(_ extra: [String: String] = [:], _ body: @Sendable (APNsProvider) async throws -> Void) async throws {
        let provider = try APNsProvider(configuration: APNsConfiguration(settings: self.settings(extra)), logger: TestLogging.quiet)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await provider.run() }
                do {
                    try await body(provider)
                } catch {
                    trigger.triggerGracefulShutdown()
                    try await group.waitForAll()
                    throw error
                }
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }
}

extension ContinuousClock.Instant {
    /// A minute from now: a safety net, not what the tests measure, long enough for a loaded machine.
    static var soon: Self { ContinuousClock.now + .seconds(60) }
}
