import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
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

                #expect(await provider.deliver(.sample(), to: "device-1", deadline: .now + .seconds(60)) == .delivered)
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

    @Test func overTLSTheCAFileIsTrustedAndTheSystemRootsAloneAreNot() async throws {
        let emulator = try FCMEmulator()
        let certificate = try FCMEmulatorCertificate()
        let directory = try TemporaryDirectory()
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = FCMEmulatorServer(emulator: emulator, certificate: certificate, logger: TestLogging.quiet) { port in portContinuation.yield(port) }

        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await ServiceGroup(services: [server], logger: TestLogging.quiet).run() }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                let baseURL = "https://localhost:\(port)"
                let path = directory.path("sa.json")
                try emulator.writeServiceAccount(baseURL: baseURL, to: path)
                let caFile = directory.path("ca.pem")
                try certificate.writeCertificate(to: caFile)
                let base = ["type: gcm", "project_id: pushgate-sandbox", "service_account_file: \(path)", "base_url: \(baseURL)"]

                let trusting = try FCMProvider(configuration: try FCMConfiguration(settings: try appSettings(base + ["ca_file: \(caFile)"])), logger: TestLogging.quiet)
                #expect(await trusting.deliver(.sample(), to: "device-tls", deadline: .now + .seconds(60)) == .delivered)
                #expect(emulator.log.all.map(\.token) == ["device-tls"])
                #expect(emulator.issuedTokenCount == 1)
                try await trusting.shutdown()

                let untrusting = try FCMProvider(configuration: try FCMConfiguration(settings: try appSettings(base)), logger: TestLogging.quiet)
                // AsyncHTTPClient retries failed handshakes until the deadline, so keep it short.
                let outcome = await untrusting.deliver(.sample(), to: "device-untrusted", deadline: .now + .seconds(2))
                try await untrusting.shutdown()
                guard case .retryLater(nil, let reason) = outcome else {
                    Issue.record("an untrusted certificate must be a transient failure, got \(outcome)")
                    return
                }
                #expect(reason.contains("no access token"))
                #expect(emulator.tokenRequestCount == 1)

                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
    }

    /// The server's own routing: only `POST /token` and `POST /v1/projects/{project}/messages:send`.
    @Test func theServerRoutesOnlyTheTwoEndpoints() async throws {
        let emulator = try FCMEmulator()
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = FCMEmulatorServer(emulator: emulator, logger: TestLogging.quiet) { port in portContinuation.yield(port) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            func status(_ method: HTTPMethod, _ path: String, body: String = "") async throws -> (Int, String, String?) {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                request.method = method
                if method == .POST { request.body = .bytes(ByteBuffer(string: body)) }
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                let text = String(buffer: try await response.body.collect(upTo: 1 << 16))
                return (Int(response.status.code), text, response.headers.first(name: "content-type"))
            }
            #expect(try await status(.GET, "/token").0 == 405)
            #expect(try await status(.POST, "/nowhere").0 == 404)
            #expect(try await status(.POST, "/v1/projects/pushgate-sandbox/other").0 == 404)
            let grant = try await status(.POST, "/token?x=1", body: "grant_type=password")
            #expect(grant.0 == 400)
            #expect(grant.1.contains("unsupported_grant_type"))
            #expect(grant.2 == "application/json; charset=UTF-8")
            let unauthenticated = try await status(.POST, "/v1/projects/pushgate-sandbox/messages:send", body: #"{"message":{"token":"t"}}"#)
            #expect(unauthenticated.0 == 401)
            #expect(unauthenticated.1.contains("UNAUTHENTICATED"))
            #expect(emulator.sendRequestCount == 1)
            #expect(emulator.tokenRequestCount == 1)
        }
    }
}
