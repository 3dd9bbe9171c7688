import Foundation
import PushgateCore
import PushgateTestSupport
import Synchronization
import Testing

/// `SIGHUP` under load, on the real binary: two sets of provider emulators (A and B, each with keys of its
/// own), a gateway on A's apps, Matrix and gorush requests without a pause, and ten reloads while an app is
/// added, the APNs app's credentials and endpoint move to B (B's emulator accepts only B's key id), the FCM
/// app moves to B, and one file is broken. No request fails or goes unanswered, every accepted token is
/// delivered exactly once, and after each reload deliveries use the new credentials and endpoints.
@Suite("configuration reload, end to end")
struct ConfigurationReloadEndToEndTests {
    /// One emulator set, as `pushgate sandbox` runs it.
    struct Emulators {
        let process: GatewayProcess
        let deliveriesURL: String
        let appsYAML: String

        static func start(in directory: TemporaryDirectory, name: String) async throws -> Emulators {
            let process = try GatewayProcess(arguments: ["sandbox", "--directory", directory.path(name)], directory: directory.url.path)
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, !process.output.contains("Deliveries:") { try await Task.sleep(for: .milliseconds(50)) }
            let url = try #require(process.output.split(separator: "\n").first { $0.contains("Deliveries:") }?.split(separator: " ").last.map(String.init))
            let apps = try String(contentsOfFile: directory.path("\(name)/pushgate-sandbox.yaml"), encoding: .utf8)
            return Emulators(process: process, deliveriesURL: url, appsYAML: apps)
        }

        /// The YAML block of one app (`  demo.apns:` and its indented keys).
        func app(_ id: String) throws -> String {
            let lines = self.appsYAML.split(separator: "\n", omittingEmptySubsequences: false)
            let start = try #require(lines.firstIndex { $0 == "  \(id):" })
            var block = [lines[start]]
            for line in lines[(start + 1)...] {
                guard line.hasPrefix("    ") else { break }
                block.append(line)
            }
            return block.joined(separator: "\n") + "\n"
        }

        /// Tokens of the deliveries the emulators accepted, each as often as it arrived.
        func delivered(provider: String) async throws -> [String] {
            guard case .array(let list) = try JSONParser.parse(Array(try await GorushEndToEndTests.getURL(self.deliveriesURL).utf8)) else { return [] }
            return list.compactMap { entry in
                guard entry["provider"]?.stringValue == provider, case .number(let status)? = entry["status"], status == 200 else { return nil }
                return entry["token"]?.stringValue
            }
        }
    }

    /// Sent tokens by route, and answers that were not what the protocol promises for a healthy app.
    final class Load: Sendable {
        private struct State {
            var sent: [(token: String, app: String, startedAfterGeneration: Int)] = []
            var failures: [String] = []
        }

        private let state = Mutex(State())
        /// The configuration generation the gateway has logged (1 at start).
        let generation = Atomic<Int>(1)
        let stop = Atomic<Bool>(false)
        /// Apps the Matrix requests go to (the added app joins after its reload).
        let matrixApps = Mutex<[String]>(["demo.fcm"])

        var sent: [(token: String, app: String, startedAfterGeneration: Int)] { self.state.withLock { $0.sent } }
        var failures: [String] { self.state.withLock { $0.failures } }

        /// Three tokens a round and a pause after each: steady load, and few enough tokens that the
        /// emulators' delivery logs (1,000 entries each) hold them all.
        func run(port: Int, worker: Int) async {
            var round = 0
            while !self.stop.load(ordering: .relaxed) {
                try? await Task.sleep(for: .milliseconds(150))
                round += 1
                let generation = self.generation.load(ordering: .relaxed)
                let iosToken = String(format: "%02x%04x", worker, round) + String(repeating: "d", count: 58)
                let androidToken = "reload-g-\(worker)-\(round)"
                let gorush = #"{"notifications":[{"platform":1,"tokens":["\#(iosToken)"],"message":"m","topic":"im.pushgate.sandbox"},{"platform":2,"tokens":["\#(androidToken)"],"message":"m"}]}"#
                do {
                    let answer = try await GorushEndToEndTests.post(port, "/api/push", gorush)
                    self.record(answer.status == 200 && answer.body.contains(#""success":"ok""#), answer.body, [(iosToken, "demo.apns"), (androidToken, "demo.fcm")], generation)
                } catch {
                    self.record(false, "gorush: \(error)", [], generation)
                }
                let apps = self.matrixApps.withLock { $0 }
                let app = apps[round % apps.count]
                let pushkey = "reload-m-\(worker)-\(round)"
                let matrix = #"{"notification":{"event_id":"$e\#(worker)-\#(round)","room_id":"!r:x","counts":{"unread":1},"devices":[{"app_id":"\#(app)","pushkey":"\#(pushkey)"}]}}"#
                do {
                    let answer = try await GorushEndToEndTests.post(port, "/_matrix/push/v1/notify", matrix)
                    self.record(answer.status == 200 && answer.body == #"{"rejected":[]}"#, "matrix \(answer.status) \(answer.body)", [(pushkey, app)], generation)
                } catch {
                    self.record(false, "matrix: \(error)", [], generation)
                }
            }
        }

        private func record(_ ok: Bool, _ answer: String, _ tokens: [(String, String)], _ generation: Int) {
            self.state.withLock { state in
                if ok {
                    state.sent += tokens.map { ($0.0, $0.1, generation) }
                } else {
                    state.failures.append(answer)
                }
            }
        }
    }

    @Test func tenReloadsUnderLoadLoseNothingAndTakeEffect() async throws {
        let directory = try TemporaryDirectory()
        let a = try await Emulators.start(in: directory, name: "a")
        defer { a.process.signal(SIGTERM) }
        let b = try await Emulators.start(in: directory, name: "b")
        defer { b.process.signal(SIGTERM) }

        let common = Self.gatewaySettings + """
            gorush: {ios_app: demo.apns, android_app: demo.fcm, allow_unauthenticated: true}

            """
        func configuration(apns: Emulators, fcm: Emulators, extra: Bool) throws -> String {
            var apps = "apps:\n" + (try apns.app("demo.apns")) + (try fcm.app("demo.fcm"))
            if extra { apps += (try a.app("demo.fcm")).replacingOccurrences(of: "  demo.fcm:", with: "  extra.fcm:") }
            return common + apps
        }
        let config = try directory.write("pushgate.yaml", try configuration(apns: a, fcm: a, extra: false))
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.signal(SIGKILL) }
        let port = try #require(try await gateway.waitForListeners().first).port

        let load = Load()
        let workers = Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<2 { group.addTask { await load.run(port: port, worker: worker) } }
            }
        }
        /// Rewrites the file, sends SIGHUP and waits for the gateway's verdict on it.
        func reload(_ text: String, expect message: String) async throws {
            let before = gateway.logEvents.filter { $0["msg"]?.hasPrefix("configuration reload") == true }.count
            _ = try directory.write("pushgate.yaml", text)
            try await Task.sleep(for: .milliseconds(300))
            gateway.signal(SIGHUP)
            let verdict = try await Self.waitFor(timeout: .seconds(30)) {
                gateway.logEvents.filter { $0["msg"]?.hasPrefix("configuration reload") == true && $0["msg"]?.contains("needs a restart") == false }
                    .dropFirst(before).first
            }
            #expect(verdict["msg"]?.hasPrefix(message) == true, "\(verdict)")
            if let generation = verdict["generation"].flatMap(Int.init) { load.generation.store(generation, ordering: .relaxed) }
            try await Task.sleep(for: .milliseconds(500))
        }

        try await Task.sleep(for: .seconds(1))
        // 1: a third app; Matrix requests go to it from now on.
        try await reload(try configuration(apns: a, fcm: a, extra: true), expect: "configuration reloaded")
        load.matrixApps.withLock { $0 = ["demo.fcm", "extra.fcm"] }
        // 2: nothing changed.
        try await reload(try configuration(apns: a, fcm: a, extra: true), expect: "configuration reloaded: nothing to change")
        // 3: the APNs app takes B's key, team and endpoint (B refuses A's key id).
        try await reload(try configuration(apns: b, fcm: a, extra: true), expect: "configuration reloaded")
        let apnsMovedAt = load.generation.load(ordering: .relaxed)
        // 4: a broken file changes nothing.
        try await reload(common + "apps:\n  broken:\n    type: nonsense\n", expect: "configuration reload failed")
        // 5: the FCM app moves to B.
        try await reload(try configuration(apns: b, fcm: b, extra: true), expect: "configuration reloaded")
        let fcmMovedAt = load.generation.load(ordering: .relaxed)
        // 6–10: back and forth without changes, and the added app removed and added again.
        try await reload(try configuration(apns: b, fcm: b, extra: true), expect: "configuration reloaded: nothing to change")
        load.matrixApps.withLock { $0 = ["demo.fcm"] }
        try await Task.sleep(for: .seconds(1))
        try await reload(try configuration(apns: b, fcm: b, extra: false), expect: "configuration reloaded")
        try await reload(try configuration(apns: b, fcm: b, extra: true), expect: "configuration reloaded")
        load.matrixApps.withLock { $0 = ["demo.fcm", "extra.fcm"] }
        try await reload(try configuration(apns: b, fcm: b, extra: true), expect: "configuration reloaded: nothing to change")
        try await reload(common + "apps: [", expect: "configuration reload failed")
        try await Task.sleep(for: .seconds(1))
        // The load goes on until it has sent more than 100 tokens, so that the checks below are about a
        // real load rather than a handful of requests; a fast machine sent several hundred by now, and a
        // slow one sends them within the minute. A load that stalled sends none and fails the check below.
        _ = try? await Self.waitFor(timeout: .seconds(60)) { load.sent.count > 100 ? true : nil }
        load.stop.store(true, ordering: .relaxed)
        await workers.value

        #expect(load.failures.isEmpty, "\(load.failures.prefix(5))")
        let sent = load.sent
        #expect(sent.count > 100 && sent.count < 1_800, "the load sent \(sent.count) tokens")

        // Every accepted token arrives exactly once, at the emulators its app pointed to when it was sent.
        let expected = Set(sent.map(\.token))
        func arrived() async throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for emulators in [a, b] {
                for provider in ["apns", "fcm"] {
                    for token in try await emulators.delivered(provider: provider) where expected.contains(token) { counts[token, default: 0] += 1 }
                }
            }
            return counts
        }
        #expect(try await GorushEndToEndTests.eventually(timeout: .seconds(120)) { try await arrived().count == expected.count })
        try await Task.sleep(for: .seconds(2))
        let counts = try await arrived()
        #expect(counts.count == expected.count, "missing: \(expected.subtracting(counts.keys).prefix(5))")
        #expect(counts.values.allSatisfy { $0 == 1 }, "duplicated: \(counts.filter { $0.value > 1 }.prefix(5))")
        let atB = Set(try await b.delivered(provider: "apns") + (try await b.delivered(provider: "fcm")))
        let apnsAfter = sent.filter { $0.app == "demo.apns" && $0.startedAfterGeneration >= apnsMovedAt }.map(\.token)
        let fcmAfter = sent.filter { $0.app == "demo.fcm" && $0.startedAfterGeneration >= fcmMovedAt }.map(\.token)
        #expect(!apnsAfter.isEmpty && !fcmAfter.isEmpty)
        #expect(apnsAfter.allSatisfy(atB.contains), "APNs deliveries after the move must reach B with B's key id")
        #expect(fcmAfter.allSatisfy(atB.contains), "FCM deliveries after the move must reach B")

        let metrics = try await GorushEndToEndTests.get(port, "/metrics").body
        #expect(metrics.contains(#"pushgate_config_reloads_total{outcome="failed"} 2"#))
        #expect(metrics.contains(#"pushgate_config_reloads_total{outcome="applied"} 5"#))
        #expect(metrics.contains(#"pushgate_config_reloads_total{outcome="unchanged"} 3"#))
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    /// gorush's callers' tokens change with a reload (its default app too, with no restart asked for), and
    /// `pushgate reload` finds the gateway through its pid file, which is gone after the gateway stops.
    @Test func gorushCallersTokensChangeLive() async throws {
        let directory = try TemporaryDirectory()
        let a = try await Emulators.start(in: directory, name: "a")
        defer { a.process.signal(SIGTERM) }
        let common = Self.gatewaySettings + """
            apps:
            \(try a.app("demo.fcm"))\((try a.app("demo.fcm")).replacingOccurrences(of: "  demo.fcm:", with: "  other.fcm:"))
            """
        let config = try directory.write("pushgate.yaml", common + "gorush: {android_app: demo.fcm, auth_tokens: [first-secret], sync: true}\n")
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config, "--pid-file", directory.path("pushgate.pid")], directory: directory.url.path)
        defer { gateway.signal(SIGKILL) }
        let port = try #require(try await gateway.waitForListeners().first).port
        let body = #"{"notifications":[{"platform":2,"tokens":["reload-auth"],"message":"m"}]}"#
        #expect(try await GorushEndToEndTests.post(port, "/api/push", body, bearer: "first-secret").status == 200)
        // At notice, requests are not logged; the reload below lowers the level to info.
        #expect(!gateway.logEvents.contains { $0["msg"] == "handled request" })
        let metricsBefore = try await GorushEndToEndTests.get(port, "/metrics").body
        #expect(metricsBefore.contains("pushgate_config_generation 1"), "\(metricsBefore)")
        // The configuration loaded at start counts as the last successful load, so an alert on its age
        // has a series from the start.
        #expect(metricsBefore.contains("pushgate_config_last_reload_success_timestamp_seconds "), "\(metricsBefore)")

        _ = try directory.write(
            "pushgate.yaml",
            common.replacingOccurrences(of: "level: notice", with: "level: info")
                + "gorush: {android_app: other.fcm, auth_tokens: [second-secret], sync: true}\n"
        )
        let reload = try await GatewayProcess.run(["reload", "--pid-file", directory.path("pushgate.pid")])
        #expect(reload.status == 0, "\(reload.errors)")
        let verdict = try await Self.waitFor(timeout: .seconds(30)) {
            gateway.logEvents.first { $0["msg"]?.hasPrefix("configuration reload") == true }
        }
        #expect(verdict["msg"] == "configuration reloaded", "\(verdict) \(gateway.errors.suffix(2_000))")
        #expect(try await GorushEndToEndTests.post(port, "/api/push", body, bearer: "first-secret").status == 401)
        let answer = try await GorushEndToEndTests.post(port, "/api/push", body, bearer: "second-secret")
        #expect(answer.status == 200 && answer.body.contains(#""success":"ok""#), "\(answer.body)")
        // The new log level took effect: requests are logged now.
        _ = try await Self.waitFor(timeout: .seconds(10)) { gateway.logEvents.first { $0["msg"] == "handled request" } }
        // The reload is counted, with its generation and time.
        let metricsAfter = try await GorushEndToEndTests.get(port, "/metrics").body
        #expect(metricsAfter.contains("pushgate_config_generation 2"), "\(metricsAfter)")
        #expect(metricsAfter.contains(#"pushgate_config_reloads_total{outcome="applied"} 1"#), "\(metricsAfter)")
        #expect(metricsAfter.contains("pushgate_config_last_reload_success_timestamp_seconds "))
        // No restart needed for any of it.
        #expect(!gateway.logEvents.contains { $0["msg"]?.contains("needs a restart") == true })

        // A leaked token: emptying the list refuses every caller at once (the routes go at the restart).
        _ = try directory.write("pushgate.yaml", common + "gorush: {android_app: other.fcm, auth_tokens: [], sync: true}\n")
        #expect(try await GatewayProcess.run(["reload", "--pid-file", directory.path("pushgate.pid")]).status == 0)
        // Applied: the second "configuration reloaded" (a "configuration reload: … needs a restart" warning
        // comes before the front ends take the new file, and counting it raced the reload on a busy core).
        _ = try await Self.waitFor(timeout: .seconds(30)) {
            gateway.logEvents.filter { $0["msg"]?.hasPrefix("configuration reloaded") == true }.count >= 2 ? true : nil
        }
        #expect(try await GorushEndToEndTests.post(port, "/api/push", body, bearer: "second-secret").status == 401)
        #expect(try await GorushEndToEndTests.post(port, "/api/push", body).status == 401)
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.path("pushgate.pid")))
    }

    /// A reload whose file lost its apps (`app:` for `apps:`) is refused and changes nothing, where it
    /// would have removed every app (and homeservers would have deleted every pusher on the rejections);
    /// a misspelt key of an app is named at a reload as at start.
    @Test func aReloadThatWouldRemoveEveryAppIsRefusedAndMisspeltKeysAreNamed() async throws {
        let directory = try TemporaryDirectory()
        let a = try await Emulators.start(in: directory, name: "a")
        defer { a.process.signal(SIGTERM) }
        let gorush = "gorush: {android_app: demo.fcm, auth_tokens: [first-secret], sync: true}\n"
        let apps = "apps:\n\(try a.app("demo.fcm"))"
        let config = try directory.write("pushgate.yaml", Self.gatewaySettings + apps + gorush)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.signal(SIGKILL) }
        let port = try #require(try await gateway.waitForListeners().first).port
        let body = #"{"notifications":[{"platform":2,"tokens":["reload-apps"],"message":"m"}]}"#

        _ = try directory.write("pushgate.yaml", Self.gatewaySettings + apps.replacingOccurrences(of: "apps:", with: "app:") + gorush)
        gateway.signal(SIGHUP)
        let refused = try await Self.waitFor(timeout: .seconds(30)) {
            gateway.logEvents.first { $0["msg"]?.hasPrefix("configuration reload") == true }
        }
        #expect(refused["msg"]?.hasPrefix("configuration reload failed") == true, "\(refused)")
        #expect(refused["msg"]?.contains("apps") == true, "\(refused)")
        let answer = try await GorushEndToEndTests.post(port, "/api/push", body, bearer: "first-secret")
        #expect(answer.status == 200 && answer.body.contains(#""success":"ok""#), "\(answer.body)")

        _ = try directory.write("pushgate.yaml", Self.gatewaySettings + apps + "    max_connection: 5\n" + gorush)
        gateway.signal(SIGHUP)
        let named = try await Self.waitFor(timeout: .seconds(30)) {
            gateway.logEvents.first { $0["msg"]?.contains("unknown key apps.demo.fcm.max_connection") == true }
        }
        #expect(named["level"] == "warning", "\(named)")
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    /// An APNs app whose key the provider refuses: queued notifications wait (credentials failing, not
    /// dropped and not retried in a tight loop); the key fixed by a reload, they are all delivered.
    @Test func notificationsQueuedWhileCredentialsFailAreDeliveredOnceTheyAreFixed() async throws {
        let directory = try TemporaryDirectory()
        let a = try await Emulators.start(in: directory, name: "a")
        defer { a.process.signal(SIGTERM) }
        let b = try await Emulators.start(in: directory, name: "b")
        defer { b.process.signal(SIGTERM) }
        // A's endpoint and CA with B's key, key id and team: A answers 403 InvalidProviderToken.
        let aAPNs = try a.app("demo.apns")
        let bAPNs = try b.app("demo.apns")
        func line(_ key: String, _ block: String) -> String {
            block.split(separator: "\n").first { $0.hasPrefix("    \(key):") }.map(String.init) ?? ""
        }
        var wrong = aAPNs
        for key in ["keyfile", "key_id", "team_id"] { wrong = wrong.replacingOccurrences(of: line(key, aAPNs), with: line(key, bAPNs)) }
        let settings = Self.gatewaySettings + "gorush: {ios_app: demo.apns, allow_unauthenticated: true}\napps:\n"
        let config = try directory.write("pushgate.yaml", settings + wrong)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.signal(SIGKILL) }
        let port = try #require(try await gateway.waitForListeners().first).port

        let tokens = (0..<5).map { String(format: "%02x", $0) + String(repeating: "e", count: 62) }
        func post(_ token: String) async throws {
            let body = #"{"notifications":[{"platform":1,"tokens":["\#(token)"],"message":"m","topic":"im.pushgate.sandbox"}]}"#
            #expect(try await GorushEndToEndTests.post(port, "/api/push", body).status == 200)
        }
        // The first notification finds the credentials refused; the others are queued after that is known
        // (sent together with it, a cold connection's first request could leave them under way too).
        try await post(tokens[0])
        #expect(try await GorushEndToEndTests.eventually(timeout: .seconds(60)) {
            try await GorushEndToEndTests.get(port, "/metrics").body.contains(#"pushgate_provider_credentials_failing{app="demo.apns"} 1"#)
        })
        for token in tokens.dropFirst() { try await post(token) }
        try await Task.sleep(for: .seconds(2))
        // One refusal reached APNs, not one per notification or per retry.
        let refusals = try await GorushEndToEndTests.getURL(a.deliveriesURL).components(separatedBy: "InvalidProviderToken").count - 1
        #expect(refusals >= 1 && refusals <= 2, "\(refusals) refusals")
        #expect(try await a.delivered(provider: "apns").filter(tokens.contains).isEmpty)

        _ = try directory.write("pushgate.yaml", settings + aAPNs)
        gateway.signal(SIGHUP)
        // Each entry waits for its next try: a minute after the refusal (the probe interval).
        #expect(try await GorushEndToEndTests.eventually(timeout: .seconds(180)) {
            Set(try await a.delivered(provider: "apns").filter(tokens.contains)) == Set(tokens)
        })
        #expect(try await a.delivered(provider: "apns").filter(tokens.contains).count == tokens.count)
        #expect(gateway.logEvents.contains { $0["msg"]?.hasPrefix("credentials failing") == true && $0["app"] == "demo.apns" })
    }

    /// A gateway started on the sandbox (no apps) and then reloaded with real apps watches their
    /// credentials from that reload on (their expiry series, the line naming each; its warnings then come
    /// from the same checks); the sandbox's own demo credentials are never watched.
    @Test func appsAReloadAddsToTheSandboxHaveTheirCredentialsWatched() async throws {
        let directory = try TemporaryDirectory()
        let a = try await Emulators.start(in: directory, name: "a")
        defer { a.process.signal(SIGTERM) }
        // At info, for the line that names each credential.
        let settings = Self.gatewaySettings.replacingOccurrences(of: "level: notice", with: "level: info")
        let config = try directory.write("pushgate.yaml", settings)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.signal(SIGKILL) }
        let port = try #require(try await gateway.waitForListeners().first).port
        #expect(!(try await GorushEndToEndTests.get(port, "/metrics").body.contains("pushgate_credential_expiry_timestamp_seconds{")))

        let real = try a.app("demo.apns").replacingOccurrences(of: "  demo.apns:", with: "  real.apns:")
        _ = try directory.write("pushgate.yaml", settings + "apps:\n" + real)
        gateway.signal(SIGHUP)
        let verdict = try await Self.waitFor(timeout: .seconds(30)) {
            gateway.logEvents.first { $0["msg"]?.hasPrefix("configuration reload") == true && $0["msg"]?.contains("needs a restart") == false }
        }
        #expect(verdict["msg"] == "configuration reloaded", "\(verdict)")
        let metrics = try await GorushEndToEndTests.get(port, "/metrics").body
        #expect(metrics.contains(#"pushgate_credential_expiry_timestamp_seconds{app="real.apns",kind="ca_file"}"#), "\(metrics)")
        #expect(!metrics.contains(#"pushgate_credential_expiry_timestamp_seconds{app="demo."#))
        #expect(gateway.logEvents.contains { $0["msg"] == "credential" && $0["app"] == "real.apns" && $0["kind"] == "ca_file" })
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
    }

    /// A gateway on a free loopback port, logging JSON lines (``GatewayProcess/logEvents``), on SQLite.
    static let gatewaySettings = """
        http: {bind_addresses: ['127.0.0.1'], port: 0}
        log: {format: json, level: notice}
        database: {url: 'sqlite:store.sqlite'}

        """

    /// Polls until `found` returns a value.
    static func waitFor<T>(timeout: Duration, _ found: () throws -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try found() { return value }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ReloadTestError("nothing within \(timeout)")
    }

    struct ReloadTestError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
