import Foundation
import NIOCore
import NIOPosix
import PushgateSandbox
import Testing

/// `pushgate health`, the container health check: exit 0 only on a 200 from `/health`, 1 otherwise,
/// and one line on standard error that says which.
@Suite("pushgate health")
struct HealthCommandTests {
    @Test func aRunningGatewayIsHealthyAtTheConfiguredListenerAndAtAGivenURL() async throws {
        let directory = try TemporaryDirectory()
        let port = try #require(FreePort.pick())
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: \(port)}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        _ = try await gateway.waitForListeners()

        // No --url: the listener the configuration names, found through $PUSHGATE_CONFIG as the gateway found it.
        let configured = try await GatewayProcess.run(["health"], environment: ["PUSHGATE_CONFIG": config], directory: directory.url.path)
        #expect(configured.status == 0, "\(configured.errors)")
        #expect(configured.errors == "pushgate health: healthy: http://127.0.0.1:\(port)/health answered 200\n")

        let given = try await GatewayProcess.run(["health", "--url", "http://127.0.0.1:\(port)/health"], directory: directory.url.path)
        #expect(given.status == 0, "\(given.errors)")

        // Any other status is unhealthy, and named.
        let elsewhere = try await GatewayProcess.run(["health", "--url", "http://127.0.0.1:\(port)/no-such-path"], directory: directory.url.path)
        #expect(elsewhere.status == 1)
        #expect(elsewhere.errors.contains("unhealthy: http://127.0.0.1:\(port)/no-such-path answered 404"), "\(elsewhere.errors)")

        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(30)) == 0, "\(gateway.errors)")
    }

    @Test func nothingListeningIsUnhealthy() async throws {
        let directory = try TemporaryDirectory()
        let port = try #require(FreePort.pick())
        let result = try await GatewayProcess.run(["health", "--url", "http://probe:s3cret@127.0.0.1:\(port)/health?key=k3y"], directory: directory.url.path)
        #expect(result.status == 1)
        // The URL as said: no credential it carries.
        #expect(result.errors.hasPrefix("pushgate health: unhealthy: no answer from http://***@127.0.0.1:\(port)/health?…"), "\(result.errors)")
        #expect(!result.errors.contains("s3cret") && !result.errors.contains("k3y"))
        #expect(result.errors.split(separator: "\n").count == 1, "\(result.errors)")
    }

    /// Every failure exits 1 (a container runtime reserves 2), an out-of-range option too.
    @Test func aTimeoutOutOfRangeExitsOne() async throws {
        let directory = try TemporaryDirectory()
        for timeout in ["0", "301"] {
            let result = try await GatewayProcess.run(["health", "--url", "http://127.0.0.1:1/health", "--timeout", timeout], directory: directory.url.path)
            #expect(result.status == 1, "\(timeout): \(result.errors)")
            #expect(result.errors.contains("--timeout must be between 1 and 300 seconds"))
        }
    }

    @Test func aServerThatNeverAnswersIsUnhealthyAfterTheTimeout() async throws {
        // Accepts connections and reads requests, and never writes a byte.
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        defer { server.close(promise: nil) }
        let port = try #require(server.localAddress?.port)
        let directory = try TemporaryDirectory()
        let started = ContinuousClock.now
        let result = try await GatewayProcess.run(["health", "--url", "http://127.0.0.1:\(port)/health", "--timeout", "1"], directory: directory.url.path)
        #expect(result.status == 1)
        #expect(result.errors.contains("unhealthy: no answer from http://127.0.0.1:\(port)/health: none within 1 s"), "\(result.errors)")
        // Bounded by the timeout, not by the server (which would wait forever); generous for a busy machine.
        #expect(ContinuousClock.now - started < .seconds(25))
    }

    @Test func aConfigurationWithoutAFixedPortAsksForURL() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", "http: {port: 0}\n")
        let result = try await GatewayProcess.run(["health", "--config", config], directory: directory.url.path)
        #expect(result.status == 1)
        #expect(result.errors.contains("http.port is 0"), "\(result.errors)")
    }
}
