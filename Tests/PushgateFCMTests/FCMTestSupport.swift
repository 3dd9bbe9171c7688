import Foundation
@_exported import PushgateTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import PushgateConfig
import PushgateCore
@testable import PushgateFCM
import PushgateSandbox
import Synchronization
import Testing

enum TestLogging {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.fcm.tests")
        logger.logLevel = .critical
        return logger
    }()
}


/// A wall clock tests move by hand.
final class ManualClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date()) { self.current = Mutex(start) }

    var now: Date { self.current.withLock { $0 } }

    func advance(by seconds: TimeInterval) { self.current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// The app id every test configures.
let testAppID = "im.example.android"

/// Parses one `type: gcm` app from YAML lines (indented under the app id).
func appSettings(_ lines: [String]) throws -> AppSettings {
    let yaml = "apps:\n  \(testAppID):\n" + lines.map { "    " + $0 }.joined(separator: "\n") + "\n"
    let configuration = try GatewayConfiguration(yaml: yaml)
    guard let app = configuration.apps.first else { throw ConfigurationError(key: "apps", "no app parsed") }
    return app
}

/// An FCM emulator on 127.0.0.1 (a free port) and a provider configured against it.
struct EmulatedFCM: Sendable {
    let emulator: FCMEmulator
    let provider: FCMProvider
    let baseURL: String
    let serviceAccountPath: String

    /// Runs `body` with a live emulator and a provider whose `base_url` and `token_uri` point at it.
    static func run(
        extraConfiguration: [String] = [],
        projectID: String = "pushgate-sandbox",
        now: @escaping @Sendable () -> Date = { Date() },
        emulatorNow: @escaping @Sendable () -> Date = { Date() },
        _ body: @Sendable (EmulatedFCM) async throws -> Void
    ) async throws {
        let emulator = try FCMEmulator(slowDelay: .seconds(8), now: emulatorNow)
        let directory = try TemporaryDirectory()
        // The emulator as the sandbox serves it: FCMEmulatorServer's NIO handlers.
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = FCMEmulatorServer(emulator: emulator, logger: TestLogging.quiet) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let baseURL = "http://127.0.0.1:\(port)"
            let path = directory.path("service-account.json")
            try emulator.writeServiceAccount(baseURL: baseURL, to: path)
            let settings = try appSettings([
                "type: gcm",
                "api_version: v1",
                "project_id: \(projectID)",
                "service_account_file: \(path)",
                "base_url: \(baseURL)",
                "fcm_options:",
                "  android: {notification: {channel_id: messages}}",
                "  apns: {payload: {aps: {mutable-content: 1}}}",
            ] + extraConfiguration)
            let provider = try FCMProvider(configuration: try FCMConfiguration(settings: settings), logger: TestLogging.quiet, now: now)
            do {
                try await body(EmulatedFCM(emulator: emulator, provider: provider, baseURL: baseURL, serviceAccountPath: path))
            } catch {
                try? await provider.shutdown()
                throw error
            }
            try await provider.shutdown()
        }
    }

    /// Delivers with a deadline `seconds` from now (a minute by default: a safety net for a loaded machine).
    func deliver(_ notification: PushNotification, to token: String, within seconds: Int = 60) async -> DeliveryOutcome {
        await self.provider.deliver(notification, to: token, deadline: .now + .seconds(seconds))
    }
}

extension PushNotification {
    /// A small data message, as the Matrix front end builds them.
    static func sample(priority: PushPriority = .high, timeToLive: Int? = nil, collapseID: String? = nil) -> PushNotification {
        PushNotification(
            priority: priority,
            payload: .object(["data": .object(["event_id": .string("$event"), "room_id": .string("!room:example.org"), "unread": .string("2")])]),
            timeToLive: timeToLive,
            collapseID: collapseID
        )
    }
}

/// A JSON object parsed from text (for assertions).
func jsonObject(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}
