import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateTestSupport
import Testing

/// Two gateways on one PostgreSQL database, as behind a load balancer: the console of either shows the
/// front ends' counts of both, and a restarted instance keeps them.
@Suite("Console, scaled out")
struct ConsoleScaleOutTests {
    static let admin = "console-scale-admin-token"

    /// The Matrix front end's `notifies` and `rejected_pushkeys` as `GET /console/api/overview` gives them.
    static func matrixCounts(_ port: Int) async throws -> [Int64]? {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/console/api/overview")
        request.headers.add(name: "Authorization", value: "Bearer \(Self.admin)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 22)
        guard response.status.code == 200, case .array(let sections)? = try JSONParser.parse(Array(buffer: body))["front_ends"] else { return nil }
        guard let matrix = sections.first(where: { $0["name"]?.stringValue == "matrix" }), let figures = matrix["figures"] else { return nil }
        guard case .number(let notifies)? = figures["notifies"], case .number(let rejected)? = figures["rejected_pushkeys"] else { return nil }
        return [Int64(notifies), Int64(rejected)]
    }

    static func notify(_ port: Int, _ index: Int, pushkey: String) async throws -> Int {
        let body = #"{"notification":{"event_id":"$scale\#(index)","room_id":"!r:example.org","type":"m.room.message","sender":"@a:example.org","content":{"msgtype":"m.text","body":"hi"},"devices":[{"app_id":"demo.apns","pushkey":"\#(pushkey)","pushkey_ts":1}]}}"#
        let answer = try await GorushEndToEndTests.post(port, "/_matrix/push/v1/notify", body)
        if answer.status != 200 { print("notify answered \(answer.status): \(answer.body)") }
        return answer.status
    }

    @Test func eitherInstancesConsoleCountsBothAndARestartKeepsThem() async throws {
        let databaseURL = try await ScratchDatabase.create(prefix: "console_scale")
        let directory = try TemporaryDirectory()
        let sandbox = try GatewayProcess(arguments: ["sandbox", "--directory", directory.path("sandbox")], directory: directory.url.path)
        defer { sandbox.signal(SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !sandbox.output.contains("Deliveries:") { try await Task.sleep(for: .milliseconds(50)) }
        let apps = try String(contentsOfFile: directory.path("sandbox/pushgate-sandbox.yaml"), encoding: .utf8)
        let config = try directory.write("pushgate.yaml", apps + """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json, level: notice}
            database: {url: '\(databaseURL)'}
            console: {admin_tokens: ['\(Self.admin)']}
            """)
        let first = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { first.signal(SIGKILL) }
        var second = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { second.signal(SIGKILL) }
        let firstPort = try #require(try await first.waitForListeners().first).port
        var secondPort = try #require(try await second.waitForListeners().first).port

        // 5 notifies to the first instance, 3 to the second; one of the second's has a pushkey the
        // Matrix front end rejects (not base64).
        let token = "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s="
        for index in 0..<5 { #expect(try await Self.notify(firstPort, index, pushkey: token) == 200) }
        for index in 5..<7 { #expect(try await Self.notify(secondPort, index, pushkey: token) == 200) }
        #expect(try await Self.notify(secondPort, 7, pushkey: "not base64!") == 200)

        // Each instance shows its own counts at once and the other's within about a second.
        for port in [firstPort, secondPort] {
            #expect(try await GorushEndToEndTests.eventually(timeout: .seconds(20)) { try await Self.matrixCounts(port) == [8, 1] }, "instance on \(port)")
        }

        // A restart of the second instance: its counts were written at shutdown, and it shows them again.
        second.signal(SIGTERM)
        #expect(await second.waitForExit(timeout: .seconds(30)) == 0)
        #expect(try await Self.matrixCounts(firstPort) == [8, 1])
        second = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        secondPort = try #require(try await second.waitForListeners().first).port
        #expect(try await Self.matrixCounts(secondPort) == [8, 1])
        #expect(try await Self.notify(secondPort, 8, pushkey: token) == 200)
        #expect(try await GorushEndToEndTests.eventually(timeout: .seconds(20)) { try await Self.matrixCounts(firstPort) == [9, 1] })

        for gateway in [first, second] {
            gateway.signal(SIGTERM)
            #expect(await gateway.waitForExit(timeout: .seconds(30)) == 0)
        }
    }
}
