import Foundation
import NIOCore
import NIOHTTP1
import PushgateProviderSupport
import PushgateTestSupport
import Testing

/// An endpoint whose addresses a policy checked (Web Push, UnifiedPush, the identity proof) is reached
/// through the proxy at a checked address: the CONNECT names the address, so the proxy does not look the
/// name up again and cannot be steered (DNS rebinding) to one the policy refused.
@Suite("Outbound proxy, pinned addresses")
struct OutboundProxyPinningTests {
    @Test(.timeLimit(.minutes(2)))
    func aCheckedEndpointIsTunnelledToItsCheckedAddress() async throws {
        let directory = try TemporaryDirectory()
        let proxyPort = try #require(FreeLoopbackPort.pick())
        let proxyLog = directory.path("proxy.log")
        let proxy = try await OutboundProxyEndToEndTests.startProxy(port: proxyPort, log: proxyLog, directory: directory)
        defer { proxy.signal(SIGTERM) }
        let targetPort = try #require(FreeLoopbackPort.pick())
        let target = try GatewayProcess(
            arguments: ["-m", "http.server", String(targetPort), "--bind", "127.0.0.1"], directory: directory.url.path,
            executable: try PythonReference.interpreter()
        )
        defer { target.signal(SIGTERM) }
        let pool = HTTP1ConnectionPool(
            proxy: try #require(OutboundProxy(url: "http://127.0.0.1:\(proxyPort)")), connectTimeout: .seconds(10), idleTimeout: .seconds(10),
            maximumIdlePerOrigin: 1
        )
        let url = try #require(URL(string: "http://localhost:\(targetPort)/"))
        var answer: HTTP1Answer?
        let ready = ContinuousClock.now + .seconds(60)
        while answer == nil, ContinuousClock.now < ready {
            answer = try? await pool.request(.GET, url, at: [.v4([127, 0, 0, 1])], headers: HTTPHeaders(), deadline: .now() + .seconds(30))
            if answer == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(answer?.status == 200)
        await pool.shutdown()
        let logged = try String(contentsOfFile: proxyLog, encoding: .utf8)
        #expect(logged.contains("CONNECT 127.0.0.1:\(targetPort) HTTP/1.1"), "\(logged)")
        #expect(!logged.contains("localhost"), "\(logged)")
    }
}
