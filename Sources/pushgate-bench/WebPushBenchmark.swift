import Crypto
import Foundation
import Hummingbird
import Logging
import PushgateConfig
import PushgateCore
import PushgateSandbox
import PushgateWebPush
import ServiceLifecycle
import Synchronization

/// Deliveries through the Web Push back end to the Web Push emulator, both in this process.
enum WebPushBenchmark {
    struct Environment {
        let emulatorPort: Int
        let subscriptions: [String]
        let configuration: GatewayConfiguration
    }

    /// Starts the emulator and writes an app configuration for it, then runs `body`.
    static func withEmulator(subscriptions count: Int, failures: Bool, _ body: (Environment) async throws -> Void) async throws {
        let log = SandboxDeliveryLog(capacity: 1000)
        let emulator = WebPushEmulator(log: log)
        let port = Mutex(0)
        let router = Router()
        emulator.addRoutes(to: router) { "http://127.0.0.1:\(port.withLock { $0 })" }
        var quiet = Logger(label: "bench")
        quiet.logLevel = .error
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLock { $0 = channel.localAddress?.port ?? 0 } }, logger: quiet
        )
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let vapidPath = directory.appendingPathComponent("vapid.pem").path
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: vapidPath, atomically: true, encoding: .utf8)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            while port.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            let base = "http://127.0.0.1:\(port.withLock { $0 })"
            var tokens = (0..<count).map { _ in emulator.issuer.issue().json(baseURL: base) }
            if failures {
                // One in ten of each failure kind, as the sandbox's special endpoints answer them.
                for (offset, id) in ["gone", "missing", "throttled", "failing"].enumerated() {
                    let special = emulator.issuer.issue(id: id).json(baseURL: base)
                    for index in stride(from: offset, to: tokens.count, by: 10) { tokens[index] = special }
                }
            }
            let configuration = try GatewayConfiguration(yaml: """
                apps:
                  bench.web:
                    type: webpush
                    vapid_private_key: \(vapidPath)
                    vapid_contact_email: bench@example.org
                    allowed_endpoints: ['127.0.0.1:*']
                    max_connections: 64
                    inflight_request_limit: 100000
                """)
            try await body(Environment(emulatorPort: port.withLock { $0 }, subscriptions: tokens, configuration: configuration))
            group.cancelAll()
        }
    }

    static func run(count: Int, concurrency: Int, failures: Bool) async throws {
        try await self.withEmulator(subscriptions: 200, failures: failures) { environment in
            var quiet = Logger(label: "bench")
            quiet.logLevel = .error
            let provider = WebPushProvider(configuration: try WebPushConfiguration(settings: environment.configuration.apps[0]), logger: quiet)
            let notification = PushNotification(payload: ["room_id": "!room:example.org", "event_id": "$event", "unread": 2, "content": ["body": "hello from the benchmark"]])
            let recorder = LatencyRecorder()
            let group = ServiceGroup(services: [provider], logger: quiet)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                // Warm up connections and caches.
                await runConcurrently(count: concurrency * 2, concurrency: concurrency) { index in
                    _ = await provider.deliver(notification, to: environment.subscriptions[index % environment.subscriptions.count], deadline: .now + .seconds(10))
                }
                let started = ContinuousClock.now
                await runConcurrently(count: count, concurrency: concurrency) { index in
                    let begin = ContinuousClock.now
                    let outcome = await provider.deliver(notification, to: environment.subscriptions[index % environment.subscriptions.count], deadline: .now + .seconds(10))
                    recorder.record(ContinuousClock.now - begin, outcome: outcome.label)
                }
                print(recorder.summary(label: "webpush deliveries (concurrency \(concurrency)\(failures ? ", failure mix" : ""))", elapsed: ContinuousClock.now - started))
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
    }
}
