import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PushgateConfig
import PushgateProviderSupport
import PushgateServer
import ServiceLifecycle
import Synchronization

/// Notify requests (one device each, Synapse's full format) to a gateway in this process, delivering to
/// the Web Push emulator: requests/s and latency at a given concurrency.
enum MatrixBenchmark {
    static func run(count: Int, concurrency: Int) async throws {
        try await WebPushBenchmark.withEmulator(subscriptions: 200, failures: false) { environment in
            var configuration = environment.configuration
            configuration.http.port = 0
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            configuration.database = .sqlite(path: directory.appendingPathComponent("store.sqlite").path)
            var quiet = Logger(label: "bench")
            quiet.logLevel = .error
            let port = Mutex(0)
            let gateway = try await Gateway.build(configuration: configuration, logger: quiet) { name, _, bound in
                if name == "http" { port.withLock { $0 = bound } }
            }
            // Requests for pushers built from the issued subscriptions.
            let bodies: [ByteBuffer] = try environment.subscriptions.enumerated().map { index, subscription in
                let keys = try JSONDecoder().decode(Subscription.self, from: Data(subscription.utf8))
                let json = #"""
                    {"notification":{"event_id":"$event\#(index)","room_id":"!room:example.org","type":"m.room.message",
                     "sender":"@alice:example.org","sender_display_name":"Alice","room_name":"Room","prio":"high",
                     "content":{"msgtype":"m.text","body":"hello"},"counts":{"unread":2},
                     "devices":[{"app_id":"bench.web","pushkey":"\#(keys.keys.p256dh)","data":{"endpoint":"\#(keys.endpoint)","auth":"\#(keys.keys.auth)"}}]}}
                    """#
                return ByteBuffer(string: json)
            }
            let recorder = LatencyRecorder()
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(connectionPool: .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                let services = gateway.serviceGroup()
                tasks.addTask { try await services.run() }
                while port.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
                let url = "http://127.0.0.1:\(port.withLock { $0 })/_matrix/push/v1/notify"
                @Sendable func notify(_ index: Int) async -> String {
                    var request = HTTPClientRequest(url: url)
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    // A fresh event id per request, so duplicate suppression does not skip deliveries.
                    var body = bodies[index % bodies.count]
                    body = ByteBuffer(string: String(buffer: body).replacingOccurrences(of: "$event\(index % bodies.count)\"", with: "$e\(index)\""))
                    request.body = .bytes(body)
                    guard let response = try? await client.execute(request, timeout: .seconds(30)) else { return "transport_error" }
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    return String(response.status.code)
                }
                await runConcurrently(count: concurrency * 4, concurrency: concurrency) { _ = await notify($0) }
                let started = ContinuousClock.now
                await runConcurrently(count: count, concurrency: concurrency) { index in
                    let begin = ContinuousClock.now
                    let status = await notify(index + 1_000_000)
                    recorder.record(ContinuousClock.now - begin, outcome: status)
                }
                print(recorder.summary(label: "matrix notify → webpush (concurrency \(concurrency))", elapsed: ContinuousClock.now - started))
                await services.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            try await client.shutdown()
        }
    }

    struct Subscription: Decodable {
        struct Keys: Decodable {
            let p256dh: String
            let auth: String
        }
        let endpoint: String
        let keys: Keys
    }
}
