import Foundation
import PushgateCore
import PushgateTestSupport
import Testing

/// Two gateways on one PostgreSQL database, as behind a load balancer (gorush #834: with a shared queue
/// every instance sent every notification): notifications accepted by either are delivered once each.
@Suite("gorush API, scaled out")
struct GorushScaleOutTests {
    @Test func twoInstancesOnOneDatabaseDeliverEachNotificationOnce() async throws {
        let databaseURL = try await ScratchDatabase.create(prefix: "gorush_scale")

        // One set of emulators both instances deliver to.
        let directory = try TemporaryDirectory()
        let sandbox = try GatewayProcess(arguments: ["sandbox", "--directory", directory.path("sandbox")], directory: directory.url.path)
        defer { sandbox.signal(SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !sandbox.output.contains("Deliveries:") { try await Task.sleep(for: .milliseconds(50)) }
        let deliveriesURL = try #require(sandbox.output.split(separator: "\n").first { $0.contains("Deliveries:") }?.split(separator: " ").last.map(String.init))
        let apps = try String(contentsOfFile: directory.path("sandbox/pushgate-sandbox.yaml"), encoding: .utf8)
        let config = try directory.write("pushgate.yaml", apps + """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json, level: notice}
            database: {url: '\(databaseURL)'}
            gorush: {ios_app: demo.apns, android_app: demo.fcm, allow_unauthenticated: true}
            """)
        let first = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let second = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let ports = [try #require(try await first.waitForListeners().first).port, try #require(try await second.waitForListeners().first).port]

        // 40 requests of 5 tokens each, alternately to the two instances.
        var tokens: [String] = []
        for request in 0..<40 {
            let batch = (0..<5).map { index in
                request % 2 == 0 ? String(format: "%02x", request) + String(repeating: "c", count: 60) + String(format: "%02x", index) : "scale-\(request)-\(index)"
            }
            tokens += batch
            let platform = request % 2 == 0 ? 1 : 2
            let body = #"{"notifications":[{"platform":\#(platform),"tokens":[\#(batch.map { "\"\($0)\"" }.joined(separator: ","))],"message":"m\#(request)","topic":"\#(platform == 1 ? "im.pushgate.sandbox" : "")"}]}"#
            let answer = try await GorushEndToEndTests.post(ports[request % 2], "/api/push", body)
            #expect(answer.status == 200)
        }
        func delivered() async throws -> [String] {
            let response = try await GorushEndToEndTests.getURL(deliveriesURL)
            guard case .array(let list) = try JSONParser.parse(Array(response.utf8)) else { return [] }
            return list.compactMap { $0["token"]?.stringValue }.filter { tokens.contains($0) }
        }
        #expect(try await GorushEndToEndTests.eventually { try await delivered().count >= tokens.count })
        // Both instances' workers have had time to claim anything twice.
        try await Task.sleep(for: .seconds(2))
        let final = try await delivered()
        #expect(final.count == tokens.count)
        #expect(Set(final) == Set(tokens))
        for gateway in [first, second] {
            gateway.signal(SIGTERM)
            #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
        }
    }
}
