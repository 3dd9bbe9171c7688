import Foundation
import PushgateCore
import PushgateTestSupport
import Testing

/// What a newcomer sees: `pushgate serve` with no apps runs a Status server on an emulated Waku network,
/// and `pushgate status-probe` acts as a Status client against it.
@Suite("Status in the sandbox, with status-probe")
struct StatusSandboxProbeTests {
    @Test func theSandboxServesStatusAndTheProbePassesEveryStep() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        let port = try #require(try await gateway.waitForListeners().first).port
        let sandbox = try #require(gateway.logEvents.first { $0["msg"] == "sandbox: a Status push notification server on an emulated Waku network" })
        let key = try #require(sandbox["public_key"])
        let node = try #require(sandbox["clients_waku_rest_url"])
        #expect(try await StatusEndToEndTests.waitFor { gateway.logEvents.contains { $0["msg"] == "status: subscribed to the Waku node" } })

        for app in ["apns", "fcm"] {
            let probe = try await GatewayProcess.run(["status-probe", "--waku-rest-url", node, "--server-key", key, "--app", app, "--timeout", "20"])
            #expect(probe.status == 0, "\(probe.output)\(probe.errors)")
            let lines = probe.output.split(separator: "\n")
            #expect(lines.map { $0.prefix(4) } == ["ok  ", "ok  ", "ok  ", "ok  "], "\(probe.output)")
            #expect(lines.map { $0.dropFirst(5).prefix(while: { $0 != ":" }) } == ["register", "query", "push", "unregister"])
        }
        #expect(try await StatusEndToEndTests.waitFor { try await NextcloudEndToEndTests.deliveries(port).count == 2 })
        let deliveries = try await NextcloudEndToEndTests.deliveries(port)
        #expect(deliveries.allSatisfy { $0["status"] == 200 })

        // A wrong server key: nobody answers, the probe says so and exits 1.
        let wrong = try await GatewayProcess.run([
            "status-probe", "--waku-rest-url", node, "--server-key", "0x02466d7fcae563e5cb09a0d1870bb580344804617879a14949cf22285f1bae3f27", "--app", "apns",
            "--timeout", "2",
        ])
        #expect(wrong.status == 1)
        #expect(wrong.output.hasPrefix("FAIL register: no registration response"))
        // A key that is not a key: a usage error.
        let usage = try await GatewayProcess.run(["status-probe", "--waku-rest-url", node, "--server-key", "0x1234", "--app", "apns"])
        #expect(usage.status == 2)
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }
}
