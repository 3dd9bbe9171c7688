import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateTestSupport
import Testing

/// The operator console in a real headless browser against the real binary and the sandbox's emulators:
/// notifications sent through the Matrix and gorush front ends to two apps, some to tokens the providers
/// refuse, then a Selenium script (`ConsoleBrowser/console_browser.py`, Debian's chromium and
/// chromium-driver) signs in, reads each app's counts, the chart, sends a test push, and checks the
/// refusals, the cookie's flags and that no token or notification text reaches a page.
///
/// The interpreter comes from `PUSHGATE_TEST_PYTHON` (scripts/test installs selenium into .build-venv);
/// screenshots are kept under `PUSHGATE_TEST_OUTPUT` (else the temporary directory), in
/// `pushgate-console-<uuid>`, whose path the test prints.
@Suite("Operator console in a browser")
struct ConsoleBrowserEndToEndTests {
    static let adminToken = "console-admin-" + String(repeating: "7f", count: 16)
    static let readOnlyToken = "console-viewer-" + String(repeating: "3c", count: 16)
    static let apnsGood = [String(repeating: "a1", count: 32), String(repeating: "b2", count: 32)]
    static let apnsDead = "dead" + String(repeating: "0", count: 60)
    static let testToken = String(repeating: "c3", count: 32)
    static let matrixText = "Matrix words that must stay private"
    static let gorushText = "gorush words that must stay private"
    static let testAlert = "console test words that must stay private"

    static func post(_ port: Int, _ path: String, _ body: String) async throws -> Int {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    @Test(.timeLimit(.minutes(5)))
    func anOperatorSeesEachAppsDeliveriesSendsATestPushAndNothingSecretShows() async throws {
        let python = try PythonReference.interpreter()
        for program in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            #expect(FileManager.default.isExecutableFile(atPath: program), "\(program) is missing: scripts/test installs Debian's chromium and chromium-driver")
        }
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json, level: info}
            database: {url: 'sqlite:store.sqlite'}
            gorush: {ios_app: demo.apns, android_app: demo.fcm, allow_unauthenticated: true}
            console:
              admin_tokens:
                - '\(Self.adminToken)'
                - {token: '\(Self.readOnlyToken)', read_only: true}
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        let port = try #require(try await gateway.waitForListeners().first { $0.name == "http" }).port

        // Matrix: two FCM pushkeys delivered, one the provider calls unregistered.
        let devices = ["fcm-matrix-ok-1", "fcm-matrix-ok-2", "unregistered-matrix-1"].map { #"{"app_id":"demo.fcm","pushkey":"\#($0)","pushkey_ts":1}"# }
        let notify = #"""
            {"notification":{"event_id":"$e1","room_id":"!r:example.org","type":"m.room.message","sender":"@a:example.org",
             "content":{"msgtype":"m.text","body":"\#(Self.matrixText)"},"counts":{"unread":1},"devices":[\#(devices.joined(separator: ","))]}}
            """#
        #expect(try await Self.post(port, "/_matrix/push/v1/notify", notify) == 200)
        // gorush: two APNs tokens delivered and one gone; one FCM token delivered.
        let push = #"""
            {"notifications":[
              {"tokens":["\#(Self.apnsGood[0])","\#(Self.apnsGood[1])","\#(Self.apnsDead)"],"platform":1,"message":"\#(Self.gorushText)","topic":"im.pushgate.sandbox"},
              {"tokens":["fcm-gorush-ok-1"],"platform":2,"message":"\#(Self.gorushText)"}]}
            """#
        #expect(try await Self.post(port, "/api/push", push) == 200)
        // gorush answers before it delivers: the script compares the console's gorush figures with
        // /api/stat/app, read a moment apart, so every token must be settled first.
        let settled = try await GorushEndToEndTests.eventually {
            let stat = try GorushEndToEndTests.json(try await GorushEndToEndTests.get(port, "/api/stat/app").body)
            return stat["ios"]?["push_success"] == .number(2) && stat["ios"]?["push_error"] == .number(1)
                && stat["android"]?["push_success"] == .number(1)
        }
        #expect(settled, "the gorush tokens were not all delivered or refused within a minute")

        let output = URL(fileURLWithPath: ProcessInfo.processInfo.environment["PUSHGATE_TEST_OUTPUT"] ?? NSTemporaryDirectory())
            .appendingPathComponent("pushgate-console-\(UUID().uuidString)").path
        let zero = ["retry_later": 0, "rejected": 0]
        let settings: [String: Any] = [
            "base": "http://127.0.0.1:\(port)", "output": output, "admin_token": Self.adminToken, "read_only_token": Self.readOnlyToken,
            "expected": [
                "demo.fcm": zero.merging(["delivered": 3, "invalid_token": 1]) { $1 },
                "demo.apns": zero.merging(["delivered": 2, "invalid_token": 1]) { $1 },
            ],
            "test_app": "demo.apns", "test_token": Self.testToken, "test_alert": Self.testAlert,
            "secrets": [Self.adminToken, Self.readOnlyToken, Self.apnsDead, Self.testToken, Self.matrixText, Self.gorushText, Self.testAlert,
                "fcm-matrix-ok-1", "fcm-matrix-ok-2", "unregistered-matrix-1", "fcm-gorush-ok-1"] + Self.apnsGood,
        ]
        let settingsFile = try directory.write("console-browser.json", String(decoding: try JSONSerialization.data(withJSONObject: settings), as: UTF8.self))
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ConsoleBrowser/console_browser.py").path
        let result = try await ExternalProcess.run(python, [script, settingsFile])
        print("console screenshots: \(output)\n\(result.output)")
        #expect(result.status == 0, "\(result.output)\n\(result.errors)\n--- gateway log ---\n\(gateway.errors.suffix(6000))")
        // Neither the admin tokens nor the device tokens reached the log.
        for secret in [Self.adminToken, Self.readOnlyToken, Self.testToken, Self.apnsDead] {
            #expect(!gateway.errors.contains(secret) && !gateway.output.contains(secret))
        }
    }
}

/// The built-in sandbox without admin tokens: the console is open to loopback clients, with a banner
/// saying so, and `GET /` leads to it; `enabled: false` turns it off.
@Suite("Operator console in the sandbox")
struct ConsoleSandboxEndToEndTests {
    static func start(_ extra: String, directory: TemporaryDirectory) async throws -> (GatewayProcess, Int) {
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json, level: info}
            database: {url: 'sqlite:store.sqlite'}
            \(extra)
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let port = try #require(try await gateway.waitForListeners().first { $0.name == "http" }).port
        return (gateway, port)
    }

    @Test func theSandboxOpensTheConsoleToLoopbackClientsWithABanner() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, port) = try await Self.start("", directory: directory)
        defer { gateway.kill() }
        // `GET /` redirects to the console, which a loopback client sees without signing in.
        let page = try await GorushEndToEndTests.get(port, "/")
        #expect(page.status == 200)
        #expect(page.body.contains(#"data-testid="sandbox-banner""#))
        #expect(page.body.contains(#"data-app-id="demo.apns""#))
        #expect(page.headers.first(name: "X-Frame-Options") == "DENY")
        #expect(page.headers.first(name: "Set-Cookie")?.contains("HttpOnly; SameSite=Strict") == true)
        let api = try await GorushEndToEndTests.get(port, "/console/api/overview")
        #expect(api.status == 200)
        let overview = try GorushEndToEndTests.json(api.body)
        #expect(overview["gateway"]?["sandbox"] == .bool(true))
        #expect(overview["apps"].map { value -> Int in if case .array(let apps) = value { apps.count } else { 0 } } == 5)
        // A state-changing call still needs a session's CSRF token.
        #expect(try await ConsoleBrowserEndToEndTests.post(port, "/console/api/test-push", #"{"app":"demo.apns","token":"aa","alert":"x"}"#) == 403)
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    @Test func enabledFalseTurnsTheConsoleOff() async throws {
        let directory = try TemporaryDirectory()
        let (gateway, port) = try await Self.start("console: {enabled: false}", directory: directory)
        defer { gateway.kill() }
        #expect(try await GorushEndToEndTests.get(port, "/console").status == 404)
        #expect(try await GorushEndToEndTests.get(port, "/console/api/overview").status == 404)
        #expect(try await GorushEndToEndTests.get(port, "/").status == 404)
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }
}
