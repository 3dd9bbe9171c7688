import Foundation
import PushgateCore
import PushgateFCM
import PushgateSandbox
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// The emulator server and the provider as services of a service group.
@Suite("FCM services")
struct FCMServiceLifecycleTests {
    @Test func theProviderDeliversWhileRunningAndClosesItsClientOnShutdown() async throws {
        let emulator = try FCMEmulator()
        let directory = try TemporaryDirectory()
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = FCMEmulatorServer(emulator: emulator, logger: TestLogging.quiet) { port in portContinuation.yield(port) }

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await ServiceGroup(services: [server], logger: TestLogging.quiet).run() }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                #expect(port > 0)
                let path = directory.path("sa.json")
                try emulator.writeServiceAccount(baseURL: "http://127.0.0.1:\(port)", to: path)
                let settings = try appSettings([
                    "type: gcm", "project_id: pushgate-sandbox", "service_account_file: \(path)", "base_url: http://127.0.0.1:\(port)",
                ])
                let provider = try FCMProvider(configuration: try FCMConfiguration(settings: settings), logger: TestLogging.quiet)
                group.addTask { try await ServiceGroup(services: [provider], logger: TestLogging.quiet).run() }

                #expect(await provider.deliver(.sample(), to: "device-1", deadline: .now + .seconds(10)) == .delivered)
                #expect(emulator.log.all.map(\.token) == ["device-1"])

                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
                // The HTTP client is closed: nothing more is sent.
                guard case .retryLater = await provider.deliver(.sample(), to: "device-2", deadline: .now + .seconds(5)) else {
                    Issue.record("a stopped provider must answer retryLater")
                    return
                }
                #expect(emulator.log.all.count == 1)
            }
        }
    }
}
