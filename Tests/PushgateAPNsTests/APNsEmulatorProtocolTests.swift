import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOSSL
import PushgateSandbox
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// The emulator's HTTP/2 server itself, with a plain HTTP client: paths, methods, HTTP/1.1, large bodies
/// (flow control), and graceful shutdown with a connection open.
@Suite("APNs emulator HTTP/2 server")
struct APNsEmulatorProtocolTests {
    /// A client trusting the emulator's CA, presenting a client certificate for `userID` if given.
    static func client(_ emulator: APNsEmulator, userID: String? = nil, http1Only: Bool = false) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(emulator.certificateAuthority.caCertificatePEM.utf8)))]
        if let userID {
            let pem = try emulator.certificateAuthority.issueClientCertificate(userID: userID)
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(pem.utf8), format: .pem))
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = http1Only ? .http1Only : .automatic
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    static func reason(_ response: HTTPClientResponse) async throws -> String? {
        let body = try await response.body.collect(upTo: 64 * 1024)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return object?["reason"] as? String
    }

    @Test func otherPathsAndMethodsGetAPNsReasonsAndTheApnsIDIsEchoed() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let client = try Self.client(harness.emulator)
            do {
                var get = HTTPClientRequest(url: "https://127.0.0.1:\(harness.port)/3/device/\(deviceToken())")
                get.method = .GET
                get.headers.add(name: "apns-id", value: "0e1f9d1c-6c51-4c7a-9e0b-1a2b3c4d5e6f")
                let notAllowed = try await client.execute(get, timeout: .seconds(10))
                #expect(notAllowed.version == .http2)
                #expect(notAllowed.status.code == 405)
                #expect(notAllowed.headers.first(name: "apns-id") == "0e1f9d1c-6c51-4c7a-9e0b-1a2b3c4d5e6f")
                #expect(try await Self.reason(notAllowed) == "MethodNotAllowed")

                var post = HTTPClientRequest(url: "https://127.0.0.1:\(harness.port)/3/devices/\(deviceToken())")
                post.method = .POST
                post.body = .bytes(ByteBuffer(string: #"{"aps":{}}"#))
                let badPath = try await client.execute(post, timeout: .seconds(10))
                #expect(badPath.status.code == 404)
                #expect(UUID(uuidString: badPath.headers.first(name: "apns-id") ?? "") != nil)
                #expect(try await Self.reason(badPath) == "BadPath")

                // No provider token and no client certificate.
                post.url = "https://127.0.0.1:\(harness.port)/3/device/\(deviceToken())"
                let missing = try await client.execute(post, timeout: .seconds(10))
                #expect(missing.status.code == 403)
                #expect(try await Self.reason(missing) == "MissingProviderToken")
                #expect(harness.emulator.log.all.map(\.reason) == ["MissingProviderToken"])
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
        }
    }

    @Test func http1IsNotServed() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let client = try Self.client(harness.emulator, http1Only: true)
            var post = HTTPClientRequest(url: "https://127.0.0.1:\(harness.port)/3/device/\(deviceToken())")
            post.method = .POST
            post.body = .bytes(ByteBuffer(string: #"{"aps":{}}"#))
            await #expect(throws: (any Error).self) {
                _ = try await client.execute(post, timeout: .seconds(10))
            }
            try await client.shutdown()
            #expect(harness.emulator.log.all.isEmpty)
        }
    }

    /// A body larger than HTTP/2's initial 64 KiB windows arrives only if the server returns window.
    @Test func aBodyBeyondTheFlowControlWindowIsReadAndRefusedAsTooLarge() async throws {
        try await EmulatorHarness.withEmulator { harness in
            let client = try Self.client(harness.emulator, userID: harness.emulator.bundleID)
            do {
                for _ in 0..<3 {
                    var post = HTTPClientRequest(url: "https://127.0.0.1:\(harness.port)/3/device/\(deviceToken())")
                    post.method = .POST
                    post.headers.add(name: "apns-topic", value: harness.emulator.bundleID)
                    let big = #"{"aps":{"alert":""# + String(repeating: "x", count: 150_000) + #""}}"#
                    post.body = .bytes(ByteBuffer(string: big))
                    let response = try await client.execute(post, timeout: .seconds(10))
                    #expect(response.status.code == 413)
                    #expect(try await Self.reason(response) == "PayloadTooLarge")
                }
                // The connection still serves ordinary requests.
                var small = HTTPClientRequest(url: "https://127.0.0.1:\(harness.port)/3/device/\(deviceToken())")
                small.method = .POST
                small.headers.add(name: "apns-topic", value: harness.emulator.bundleID)
                small.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"hi"}}"#))
                let response = try await client.execute(small, timeout: .seconds(10))
                #expect(response.status.code == 200)
                #expect(try await response.body.collect(upTo: 1024).readableBytes == 0)
            } catch {
                try await client.shutdown()
                throw error
            }
            try await client.shutdown()
            let log = harness.emulator.log.all
            #expect(log.map(\.status) == [413, 413, 413, 200])
            #expect(log.allSatisfy { $0.headers["authentication"] == "certificate" })
        }
    }

    @Test func gracefulShutdownClosesAnOpenConnection() async throws {
        let emulator = try APNsEmulator(bundleID: "im.pushgate.test")
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let application = try emulator.makeApplication(logger: TestLogging.quiet) { port in
            continuation.yield(port)
            continuation.finish()
        }
        let client = try Self.client(emulator, userID: emulator.bundleID)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await application.run() }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                var post = HTTPClientRequest(url: "https://127.0.0.1:\(port)/3/device/\(deviceToken())")
                post.method = .POST
                post.headers.add(name: "apns-topic", value: emulator.bundleID)
                post.body = .bytes(ByteBuffer(string: #"{"aps":{"alert":"hi"}}"#))
                let response = try await client.execute(post, timeout: .seconds(10))
                #expect(response.status.code == 200)
                // The client keeps its HTTP/2 connection; shutdown must not wait for it to leave.
                let started = ContinuousClock.now
                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
                // Waiting for the client would take its 60-second idle timeout: far above this bound,
                // which leaves room for a loaded machine.
                #expect(ContinuousClock.now - started < .seconds(30))
            }
        }
        try await client.shutdown()
    }
}
