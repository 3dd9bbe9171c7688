import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// `pushgate serve` gives back the pages only start-up used once it listens, and keeps working: every
/// code path a notification takes afterwards maps its pages again.
@Suite("start-up pages")
struct StartUpPagesProcessTests {
    static func notify(_ port: Int) async throws -> (status: UInt, body: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/_matrix/push/v1/notify")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(
            ByteBuffer(
                string: #"{"notification":{"event_id":"$e","room_id":"!r:example.org","counts":{"unread":1},"devices":[{"app_id":"demo.fcm","pushkey":"demo-fcm-registration-token"}]}}"#
            )
        )
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    static func releasedEvent(_ gateway: GatewayProcess) -> [String: String]? {
        gateway.logEvents.first { $0["msg"] == "start-up pages released" }
    }

    @Test func theResidentSetShrinksOnceListeningAndDeliveriesStillWork() async throws {
        let directory = try TemporaryDirectory()
        // No apps: the built-in sandbox, so a delivery runs through a provider's code after the release.
        let config = try directory.write("pushgate.yaml", ServeProcessTests.config())
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        let port = try #require(try await gateway.waitForListeners().first { $0.name == "http" }?.port)
        let deadline = ContinuousClock.now + .seconds(30)
        while Self.releasedEvent(gateway) == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let event = try #require(Self.releasedEvent(gateway), "\(gateway.errors)")
        let before = try #require(event["resident_mib_before"].flatMap(Int.init))
        let after = try #require(event["resident_mib_after"].flatMap(Int.init))
        #expect(after < before, "\(event)")
        for _ in 0..<3 {
            let answer = try await Self.notify(port)
            #expect(answer.status == 200 && answer.body.contains(#""rejected":[]"#), "\(answer)")
            #expect(try await ServeProcessTests.get("http://127.0.0.1:\(port)/health").status == 200)
        }
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0, "\(gateway.errors)")
        #expect(gateway.logEvents.filter { $0["msg"] == "start-up pages released" }.count == 1)
    }

    @Test func theEnvironmentKeepsThem() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", ServeProcessTests.config())
        let gateway = try GatewayProcess(
            arguments: ["serve", "--config", config], environment: ["PUSHGATE_KEEP_START_UP_PAGES": "1"], directory: directory.url.path
        )
        defer { gateway.kill() }
        let port = try #require(try await gateway.waitForListeners().first { $0.name == "http" }?.port)
        let answer = try await Self.notify(port)
        #expect(answer.status == 200, "\(answer)")
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0, "\(gateway.errors)")
        #expect(Self.releasedEvent(gateway) == nil)
    }
}
