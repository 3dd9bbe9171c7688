import Foundation
import Hummingbird
import PushgateCore
import PushgateSandbox
import PushgateTestSupport
import Testing

/// Two Status servers with one identity on one PostgreSQL database, each polling its own Waku node of one
/// network, so both receive every message: each registration and push request is handled, answered and
/// delivered once.
@Suite("Status, scaled out")
struct StatusScaleOutTests {
    @Test func twoInstancesOnOneDatabaseHandleEachMessageOnce() async throws {
        let databaseURL = try await ScratchDatabase.create(prefix: "status_scale")

        let directory = try TemporaryDirectory()
        let sandbox = try GatewayProcess(arguments: ["sandbox", "--directory", directory.path("sandbox")], directory: directory.url.path)
        defer { sandbox.signal(SIGTERM) }
        #expect(try await StatusEndToEndTests.waitFor { sandbox.output.contains("Deliveries:") })
        let deliveriesURL = try #require(sandbox.output.split(separator: "\n").first { $0.contains("Deliveries:") }?.split(separator: " ").last.map(String.init))
        let apps = try String(contentsOfFile: directory.path("sandbox/pushgate-sandbox.yaml"), encoding: .utf8)
        let keyFile = try directory.write("status.key", StatusEndToEndTests.serverSecret)

        let emulator = WakuNetworkEmulator(logger: TestLogging.quiet)
        var ports: [Int] = []
        for _ in 0..<3 { ports.append(try #require(FreePort.pick(avoiding: Set(ports)))) }
        let nodes = ports.enumerated().map { index, port in emulator.makeNode(name: "node-\(index)").makeApplication(host: "127.0.0.1", port: port) }
        try await RunningServices.with(nodes) {
            var gateways: [GatewayProcess] = []
            var httpPorts: [Int] = []
            for index in 0..<2 {
                let config = try directory.write("pushgate-\(index).yaml", apps + """
                    http: {bind_addresses: ['127.0.0.1'], port: 0}
                    log: {format: json}
                    database: {url: '\(databaseURL)'}
                    status:
                      waku_rest_url: http://127.0.0.1:\(ports[index])
                      identity_key_file: \(keyFile)
                      ios_app: demo.apns
                      android_app: demo.fcm
                      poll_interval_ms: 20
                    """)
                let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
                httpPorts.append(try #require(try await gateway.waitForListeners().first).port)
                gateways.append(gateway)
            }
            defer { for gateway in gateways { gateway.kill() } }
            // For a failed expectation: what went wrong inside the gateways, say a poll cut short or a store
            // call past database.timeout (only read when an expectation fails).
            func gatewayTrouble() -> String {
                let lines = gateways.enumerated().flatMap { index, gateway in
                    gateway.logEvents.filter { ["warning", "error", "critical"].contains($0["level"] ?? "") }.map { event in
                        let details = event.filter { !["level", "msg", "ts", "logger"].contains($0.key) }.sorted { $0.key < $1.key }
                        return "gateway \(index) \(event["level"] ?? ""): \(event["msg"] ?? "")" + details.map { " \($0.key)=\($0.value)" }.joined()
                    }
                }
                return lines.isEmpty ? "gateway warnings and errors: none" : "gateway warnings and errors:\n" + lines.joined(separator: "\n")
            }
            for gateway in gateways {
                #expect(try await StatusEndToEndTests.waitFor { gateway.logEvents.contains { $0["msg"] == "status: subscribed to the Waku node" } })
            }
            let network = StatusEndToEndTests.Network(emulator: emulator, serverPort: ports[0], clientPort: ports[2])
            #expect(try await StatusEndToEndTests.waitFor { try await StatusEndToEndTests.subscribe(network.clientURL) })
            let test = StatusEndToEndTests()
            let registered = try await test.register(network, installation: StatusEndToEndTests.installation1, version: 1)
            #expect(registered["success"] as? Bool == true, "\(gatewayTrouble())")
            let bob = try #require(try await StatusEndToEndTests.run("publickey", ["secret": StatusEndToEndTests.bob])["compressed"] as? String)
            for index in 0..<5 {
                let answers = try await test.push(network, messageID: String(format: "%064x", index + 1), requests: [[
                    "target_key": StatusEndToEndTests.aliceKey, "installation_id": StatusEndToEndTests.installation1, "access_token": StatusEndToEndTests.token1,
                    "chat": "chat-\(index)", "type": 1, "author_key": bob,
                ]])
                #expect(answers.count == 1, "one answer per push request, whichever instance took it; \(gatewayTrouble())")
            }
            func delivered() async throws -> Int {
                let response = try await GorushEndToEndTests.getURL(deliveriesURL)
                guard case .array(let list) = try JSONParser.parse(Array(response.utf8)) else { return 0 }
                return list.count { $0["token"]?.stringValue == StatusEndToEndTests.apnsToken }
            }
            #expect(try await StatusEndToEndTests.waitFor { try await delivered() >= 5 })
            // Both instances see every message; what one handled, the other skips as a duplicate (once it
            // has polled it, which a loaded machine may take a while to do).
            func duplicates() async throws -> Int {
                var duplicates = 0
                for port in httpPorts {
                    let metrics = try await GorushEndToEndTests.get(port, "/metrics").body
                    let line = metrics.split(separator: "\n").first { $0.hasPrefix("pushgate_status_messages_duplicate_total ") }
                    duplicates += Int(line?.split(separator: " ").last ?? "0") ?? 0
                }
                return duplicates
            }
            _ = try await StatusEndToEndTests.waitFor { try await duplicates() >= 6 }
            #expect(try await duplicates() == 6, "the registration and five push requests, each seen by the instance that did not handle it; \(gatewayTrouble())")
            #expect(try await delivered() == 5)
            for gateway in gateways { gateway.signal(SIGTERM) }
            for gateway in gateways { #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0) }
        }
    }
}
