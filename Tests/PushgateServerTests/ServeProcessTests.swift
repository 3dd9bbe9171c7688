import AsyncHTTPClient
import Crypto
import PushgateSandbox
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// `pushgate serve`, `check-config` and `--help` as an operator runs them.
@Suite("pushgate command")
struct ServeProcessTests {
    static func get(_ url: String) async throws -> (status: UInt, body: String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (response.status.code, String(buffer: body))
    }

    /// - Parameter http: more keys of the `http` section, as `key: value, …`.
    static func config(database: String = "sqlite:store.sqlite", http: String = "", extra: String = "") -> String {
        """
        http: {bind_addresses: ['127.0.0.1'], port: 0\(http.isEmpty ? "" : ", " + http)}
        log: {format: json, level: info}
        database: {url: '\(database)'}
        \(extra)
        """
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func serveAnswersHealthAndExitsZeroOnASignal(signal: Int32) async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", Self.config(http: "io_threads: 3, compute_threads: 2"))
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let listener = try #require(try await gateway.waitForListeners().first)
        // http.io_threads and http.compute_threads set the event loops and the compute threads before
        // anything makes them.
        let threads = gateway.logEvents.first { $0["msg"] == "threads" }
        #expect(threads?["io"] == "3", "\(gateway.errors)")
        #expect(threads?["compute"] == "2", "\(gateway.errors)")
        #if os(Linux)
        // NIO names the shared event loops' threads NIO-SGLTN-…; the compute threads are pushgate-cpu.
        #expect(gateway.threadNames.filter { $0.hasPrefix("NIO-SGLTN-") }.count == 3, "\(gateway.threadNames)")
        #expect(gateway.threadNames.filter { $0 == "pushgate-cpu" }.count == 2, "\(gateway.threadNames)")
        #endif
        do {
            #expect(try await Self.get("http://127.0.0.1:\(listener.port)/health").status == 200)
        } catch {
            Issue.record("GET /health on \(listener) failed: \(error); the gateway logged: \(gateway.errors)")
        }
        #expect(FileManager.default.fileExists(atPath: directory.path("store.sqlite")))

        let asked = ContinuousClock.now
        gateway.signal(signal)
        let status = await gateway.waitForExit(timeout: .seconds(60))
        #expect(status == 0, "\(gateway.errors)")
        // Not held up by idle connections or the outbox (far below a minute, far above scheduling delays).
        #expect(ContinuousClock.now - asked < .seconds(30))
        // Every line is JSON when log.format is json.
        let lines = gateway.errors.split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.count == gateway.logEvents.count, "\(gateway.errors)")
    }

    @Test func theEmbeddedDefaultsServeOnPort5000WithSQLiteInTheWorkingDirectory() async throws {
        let directory = try TemporaryDirectory()
        let gateway = try GatewayProcess(arguments: ["serve"], directory: directory.url.path)
        defer { gateway.kill() }
        let deadline = ContinuousClock.now + .seconds(60)
        var status: UInt = 0
        while ContinuousClock.now < deadline, status != 200 {
            status = (try? await Self.get("http://127.0.0.1:5000/health").status) ?? 0
            if status != 200 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(status == 200, "\(gateway.errors)")
        #expect(FileManager.default.fileExists(atPath: directory.path("pushgate.sqlite")))
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    @Test func sygnalConfIsReadWhenNoOtherConfigurationIsNamed() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("sygnal.yaml", Self.config())
        let gateway = try GatewayProcess(arguments: ["serve"], environment: ["SYGNAL_CONF": config], directory: directory.url.path)
        let listener = try #require(try await gateway.waitForListeners().first)
        do {
            #expect(try await Self.get("http://127.0.0.1:\(listener.port)/health").status == 200)
        } catch {
            Issue.record("GET /health failed: \(error); the gateway logged: \(gateway.errors)")
        }
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    @Test func servesFromPostgreSQL() async throws {
        let url = try #require(ProcessInfo.processInfo.environment["PUSHGATE_TEST_POSTGRES_URL"], "run with scripts/test")
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", Self.config(database: url))
        // Two instances on one database, as behind a load balancer.
        let first = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let second = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        for gateway in [first, second] {
            let listener = try #require(try await gateway.waitForListeners().first)
            #expect(try await Self.get("http://127.0.0.1:\(listener.port)/health").status == 200)
        }
        for gateway in [first, second] {
            gateway.signal(SIGTERM)
            #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0, "\(gateway.errors)")
        }
    }

    @Test func everyBindAddressAndThePrometheusListenerAnswer() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1', '127.0.0.2'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            metrics: {prometheus: {enabled: true, address: '127.0.0.1', port: 0}}
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let listeners = try await gateway.waitForListeners(count: 3)
        #expect(Set(listeners.filter { $0.name == "http" }.map(\.host)) == ["127.0.0.1", "127.0.0.2"])
        for listener in listeners where listener.name == "http" {
            do {
                #expect(try await Self.get("http://\(listener.host):\(listener.port)/health").status == 200)
            } catch {
                Issue.record("GET /health on \(listener) failed: \(error); the gateway logged: \(gateway.errors)")
            }
        }
        let metrics = try #require(listeners.first { $0.name == "metrics" })
        let scraped = try await Self.get("http://127.0.0.1:\(metrics.port)/metrics")
        #expect(scraped.status == 200)
        #expect(scraped.body.contains(#"pushgate_http_requests_total{route="/health",method="GET",code="200"} 2"#))
        // Sygnal's in-flight drop counter exists for every app from the start (here the sandbox's demo apps).
        #expect(scraped.body.contains(#"sygnal_inflight_request_limit_drop_total{pushkin="demo.apns"} 0"#))
        // The gateway's own answers on that listener too.
        let unknown = try await Self.get("http://127.0.0.1:\(metrics.port)/foo")
        #expect(unknown.status == 404 && unknown.body.contains("M_UNRECOGNIZED"), "\(unknown)")
        var post = HTTPClientRequest(url: "http://127.0.0.1:\(metrics.port)/metrics")
        post.method = .POST
        let posted = try await HTTPClient.shared.execute(post, timeout: .seconds(10))
        #expect(posted.status.code == 405 && posted.headers["Allow"] == ["GET, HEAD"], "\(posted.status) \(posted.headers)")
        var head = HTTPClientRequest(url: "http://127.0.0.1:\(metrics.port)/metrics")
        head.method = .HEAD
        #expect(try await HTTPClient.shared.execute(head, timeout: .seconds(10)).status.code == 200)
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    @Test func anInvalidConfigurationStopsServeWithStatus2AndNamesTheKey() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("bad.yaml", "http: {port: eighty}\n")
        let result = try await GatewayProcess.run(["serve", "--config", config], directory: directory.url.path)
        #expect(result.status == 2)
        #expect(result.errors.contains("http.port"))
        #expect(!FileManager.default.fileExists(atPath: directory.path("pushgate.sqlite")))
    }

    /// A second `serve` given a running gateway's pid file refuses to start and leaves the file, so
    /// `pushgate reload` still finds the first; one on a port in use names the listener and the address.
    /// `reload` with a stale pid file (the pid of another program) signals nothing.
    @Test func aPidFileStaysItsGatewaysAndABusyPortIsNamed() async throws {
        let directory = try TemporaryDirectory()
        let pidPath = directory.path("pushgate.pid")
        let first = try GatewayProcess(
            arguments: ["serve", "--config", try directory.write("first.yaml", Self.config()), "--pid-file", pidPath], directory: directory.url.path
        )
        defer { first.signal(SIGKILL) }
        let port = try #require(try await first.waitForListeners().first).port
        let own = try String(contentsOfFile: pidPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(own == String(first.processIdentifier))

        let second = try directory.write("second.yaml", Self.config().replacingOccurrences(of: "port: 0", with: "port: \(port)").replacingOccurrences(of: "store.sqlite", with: "second.sqlite"))
        let refused = try await GatewayProcess.run(["serve", "--config", second, "--pid-file", pidPath], directory: directory.url.path)
        #expect(refused.status == 1)
        #expect(refused.errors.contains("names a running gateway"), "\(refused.errors)")
        #expect(try String(contentsOfFile: pidPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) == own)

        // In a directory of its own: its sandbox writes credentials of its own.
        let elsewhere = directory.url.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let busy = try await GatewayProcess.run(["serve", "--config", second, "--pid-file", directory.path("second.pid")], directory: elsewhere.path)
        #expect(busy.status == 1, "\(busy.errors.suffix(20_000))")
        #expect(busy.errors.contains("the http listener cannot serve on 127.0.0.1:\(port) (http.bind_addresses and http.port)"), "\(busy.errors)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("second.pid")))

        #expect(try await GatewayProcess.run(["reload", "--pid-file", pidPath]).status == 0)
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["30"]
        try sleeper.run()
        defer { sleeper.terminate() }
        let stale = try directory.write("stale.pid", "\(sleeper.processIdentifier)\n")
        let reload = try await GatewayProcess.run(["reload", "--pid-file", stale])
        #expect(reload.status == 1)
        #expect(reload.errors.contains("is not a running `pushgate serve`"), "\(reload.errors)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(sleeper.isRunning, "the stale pid's process was not signalled")

        first.signal(SIGTERM)
        #expect(await first.waitForExit(timeout: .seconds(30)) == 0)
        #expect(!FileManager.default.fileExists(atPath: pidPath))
    }

    /// A file that configures no apps (a misspelt `apps:`) is valid, but `check-config` warns that `serve`
    /// would run the sandbox's demo apps, and counts it.
    @Test func checkConfigWarnsOfAFileWithNoApps() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", "http: {port: 5123}\napp:\n  com.example.ios: {type: apns}\n")
        let result = try await GatewayProcess.run(["check-config", "--config", config])
        #expect(result.status == 0)
        #expect(result.errors.contains("the file configures no apps"), "\(result.errors)")
        #expect(result.output.contains("warnings: 2"), "\(result.output)")
    }

    @Test func anUnreachableDatabaseIsAClearFailure() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", Self.config(database: "postgres://nobody:secret@127.0.0.1:1/none?sslmode=disable"))
        let result = try await GatewayProcess.run(["serve", "--config", config], directory: directory.url.path)
        #expect(result.status == 1)
        #expect(result.errors.contains("cannot start"))
        #expect(!result.errors.contains("secret"))
    }

    @Test func checkConfigDescribesAValidConfiguration() async throws {
        let directory = try TemporaryDirectory()
        // Real credentials, as the sandbox issues them: check-config reads every key file.
        let apns = try APNsEmulator(bundleID: "im.example.ios")
        let p8 = try directory.write("k.p8", apns.privateKeyPEM)
        let fcm = try FCMEmulator(log: SandboxDeliveryLog())
        try fcm.writeServiceAccount(baseURL: "http://127.0.0.1:1", to: directory.path("f.json"))
        let vapid = try directory.write("v.pem", P256.Signing.PrivateKey().pemRepresentation)
        let config = try directory.write("sygnal.yaml", """
            http: {port: 5123}
            database: {url: 'postgres://pushgate:hunter2@db.internal:5432/pushgate'}
            unknown_section: {a: 1}
            apps:
              im.example.ios: {type: apns, keyfile: \(p8), key_id: \(apns.keyID), team_id: \(apns.teamID), topic: im.example.ios}
              im.example.android: {type: gcm, api_version: v1, project_id: \(fcm.projectID), service_account_file: \(directory.path("f.json")), colour: blue}
              im.example.web: {type: webpush, vapid_private_key: \(vapid), vapid_contact_email: a@example.org}
              im.example.ios.voip: {type: apns, keyfile: \(p8), key_id: \(apns.keyID), team_id: \(apns.teamID), topic: im.example.ios}
            gorush: {ios_app: im.example.ios, android_app: im.example.android, auth_tokens: [caller-secret-1, caller-secret-2]}
            nextcloud: {fcm_app: im.example.android, apns_app: im.example.ios}
            """)
        let result = try await GatewayProcess.run(["check-config", "--config", config])
        #expect(result.status == 0, "\(result.errors)")
        // Each front end's section is summarised, its callers' tokens counted, not shown.
        #expect(result.output.contains("gorush: POST /api/push for 2 caller tokens; apps ios im.example.ios, android im.example.android; async (queued)"), "\(result.output)")
        #expect(result.output.contains("nextcloud: /devices and /notifications; apps fcm im.example.android, apns im.example.ios"), "\(result.output)")
        #expect(!result.output.contains("caller-secret"))
        #expect(result.output.contains("apps: 4 (apns: 2, gcm: 1, webpush: 1)"))
        #expect(result.output.contains("im.example.web: webpush"))
        #expect(result.output.contains("127.0.0.1:5123"))
        #expect(result.output.contains("postgres (pushgate@db.internal:5432/pushgate"))
        #expect(!result.output.contains("hunter2"))
        #expect(result.errors.contains("unknown_section"))
        #expect(result.errors.contains("apps.im.example.android.colour"))
    }

    @Test func checkConfigDescribesAUnifiedPushApp() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            apps:
              "*": {type: unifiedpush, allowed_endpoints: ['push.example.org', 'ntfy.example.net:*'], ttl: 3600, colour: blue}
              chat.fluffy.*: {type: unifiedpush}
            """)
        let result = try await GatewayProcess.run(["check-config", "--config", config])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("apps: 2 (unifiedpush: 2)"))
        #expect(result.output.contains("*: unifiedpush (only hosts matching allowed_endpoints: 2 globs)"))
        #expect(result.output.contains("chat.fluffy.*: unifiedpush (any public https endpoint)"))
        #expect(result.output.contains("matrix: UnifiedPush gateway discovery on GET /_matrix/push/v1/notify"))
        #expect(result.errors.contains("apps.*.colour"))

        #expect(!result.errors.contains("matches every host"))

        // A glob that matches every host opens private and loopback addresses: valid, and warned of.
        let open = try directory.write("open.yaml", "apps:\n  \"*\": {type: unifiedpush, allowed_endpoints: ['*']}\n")
        let warned = try await GatewayProcess.run(["check-config", "--config", open])
        #expect(warned.status == 0, "\(warned.errors)")
        #expect(warned.errors.contains("apps.*.allowed_endpoints: * matches every host"), "\(warned.errors)")

        let invalid = try directory.write("invalid.yaml", "apps:\n  \"*\": {type: unifiedpush, ttl: -1}\n")
        let refused = try await GatewayProcess.run(["check-config", "--config", invalid])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("apps.*.ttl"))
    }

    @Test func nextcloudMayOnlyNameConfiguredApps() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", "nextcloud: {fcm_app: missing.app}\n")
        let result = try await GatewayProcess.run(["check-config", "--config", config])
        #expect(result.status == 2)
        #expect(result.errors.contains("nextcloud.fcm_app"))
        // An app of the wrong type for its key is refused too, naming both.
        let p8 = try directory.write("key.p8", try P256.Signing.PrivateKey().pemRepresentation)
        let wrongType = try directory.write("wrong.yaml", """
            apps:
              files.ios: {type: apns, keyfile: \(p8), key_id: ABCDEFGHIJ, team_id: TEAM123456, topic: files.ios}
            nextcloud: {fcm_app: files.ios}
            """)
        let refused = try await GatewayProcess.run(["check-config", "--config", wrongType])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("nextcloud.fcm_app") && refused.errors.contains("expected a gcm app"), "\(refused.errors)")
    }

    @Test func checkConfigReadsTheAppsKeyFiles() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("sygnal.yaml", """
            apps:
              im.example.web: {type: webpush, vapid_private_key: \(directory.path("absent.pem")), vapid_contact_email: a@example.org}
            """)
        let result = try await GatewayProcess.run(["check-config", "--config", config])
        #expect(result.status == 2)
        #expect(result.errors.contains("apps.im.example.web.vapid_private_key"))
    }

    @Test func checkConfigRejectsAnInvalidConfigurationWithStatus2() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("bad.yaml", "apps:\n  x: {type: carrier-pigeon}\n")
        let result = try await GatewayProcess.run(["check-config", "--config", config])
        #expect(result.status == 2)
        #expect(result.errors.contains("apps.x.type"))
        let missing = try await GatewayProcess.run(["check-config", "--config", directory.path("absent.yaml")])
        #expect(missing.status == 2)
    }

    @Test func helpDocumentsEverySubcommand() async throws {
        let result = try await GatewayProcess.run(["--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("serve"))
        #expect(result.output.contains("check-config"))
        #expect(result.output.contains("SYGNAL_CONF"))
        let serveHelp = try await GatewayProcess.run(["serve", "--help"])
        #expect(serveHelp.output.contains("--config"))
    }
}
