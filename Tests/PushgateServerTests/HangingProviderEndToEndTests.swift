import Foundation
import PushgateCore
import PushgateTestSupport
import Testing

/// Two apps on two emulators through the real binary, under a steady gorush load: the FCM app's
/// provider starts hanging (its connection accepts requests and never answers), and the APNs app's
/// deliveries keep their latency; everything accepted for the FCM app arrives once it answers again.
@Suite("A hanging provider, end to end")
struct HangingProviderEndToEndTests {
    /// A TCP relay to the FCM emulator that, while the flag file exists, swallows what clients send: the
    /// provider accepts every request and never answers (connections already open included).
    static let relayScript = """
        import asyncio, os, sys
        listen, upstream, flag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
        async def pipe(reader, writer, swallow):
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        break
                    if swallow and os.path.exists(flag):
                        continue
                    writer.write(data)
                    await writer.drain()
            except Exception:
                pass
            finally:
                writer.close()
        async def handle(reader, writer):
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", upstream)
            await asyncio.gather(pipe(reader, upstream_writer, True), pipe(upstream_reader, writer, False))
        async def main():
            server = await asyncio.start_server(handle, "127.0.0.1", listen)
            print("ready", flush=True)
            async with server:
                await server.serve_forever()
        asyncio.run(main())
        """

    static func p99(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
    }

    @Test(.timeLimit(.minutes(8)))
    func anotherAppsLatencyHoldsWhileOneProviderHangsAndNothingIsLost() async throws {
        let directory = try TemporaryDirectory()
        let sandbox = try GatewayProcess(arguments: ["sandbox", "--directory", directory.path("sandbox")], directory: directory.url.path)
        defer { sandbox.signal(SIGTERM) }
        let ready = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < ready, !sandbox.output.contains("Deliveries:") { try await Task.sleep(for: .milliseconds(50)) }
        let deliveriesURL = String(try #require(sandbox.output.split(separator: "\n").first { $0.hasPrefix("Deliveries:") }?.split(separator: " ").last))
        var apps = try String(contentsOfFile: directory.path("sandbox/pushgate-sandbox.yaml"), encoding: .utf8)
        let fcmToken = String(try #require(apps.firstMatch(of: /FCM ([^,]+),/)?.1))
        let fcmPort = String(try #require(apps.firstMatch(of: /base_url: http:\/\/127\.0\.0\.1:(\d+)/)?.1))

        let relayPort = try #require(FreeLoopbackPort.pick())
        let flag = directory.path("hang")
        let relay = try GatewayProcess(
            arguments: ["-c", Self.relayScript, String(relayPort), fcmPort, flag], directory: directory.url.path,
            executable: try PythonReference.interpreter()
        )
        defer { relay.signal(SIGTERM) }
        while ContinuousClock.now < ready, !relay.output.contains("ready") { try await Task.sleep(for: .milliseconds(20)) }
        // The FCM app's messages go through the relay (its access tokens still come from the emulator).
        apps = apps.replacingOccurrences(of: "base_url: http://127.0.0.1:\(fcmPort)", with: "base_url: http://127.0.0.1:\(relayPort)")
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            gorush: {ios_app: demo.apns, android_app: demo.fcm, allow_unauthenticated: true}

            """ + apps)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        let port = try #require(try await gateway.waitForListeners().first).port

        /// One request every 20 ms, each with one APNs and one FCM notification; returns when each was sent.
        func steadyLoad(_ phase: String, for duration: Duration) async throws -> [String: Date] {
            var sent: [String: Date] = [:]
            let end = ContinuousClock.now + duration
            var index = 0
            while ContinuousClock.now < end {
                let text = "\(phase)-\(index)"
                sent[text] = Date()
                let body = #"{"notifications":[{"tokens":["\#(String(repeating: "a1", count: 32))"],"platform":1,"message":"ios-\#(text)","topic":"im.pushgate.sandbox"},{"tokens":["\#(fcmToken)"],"platform":2,"message":"android-\#(text)"}]}"#
                #expect(try await GorushEndToEndTests.post(port, "/api/push", body).status == 200)
                index += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            return sent
        }
        /// When each message first arrived at an emulator, by its text.
        func arrivals() async throws -> [String: Date] {
            guard case .array(let listing) = try JSONParser.parse(Array(try await GorushEndToEndTests.getURL(deliveriesURL).utf8)) else { return [:] }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            var first: [String: Date] = [:]
            for delivery in listing where delivery["status"] == 200 {
                guard let at = delivery["receivedAt"]?.stringValue.flatMap(formatter.date(from:)) else { continue }
                for match in Set((delivery["body"]?.stringValue ?? "").matches(of: /(ios|android)-(healthy|hung)\d+-\d+/).map { String($0.0) }) {
                    first[match] = min(first[match] ?? at, at)
                }
            }
            return first
        }
        /// The APNs app's delivery latencies, in seconds, once every one of `sent` has arrived.
        func latencies(_ sent: [String: Date]) async throws -> [Double] {
            #expect(try await GorushEndToEndTests.eventually(timeout: .seconds(30)) {
                let seen = try await arrivals()
                return sent.keys.allSatisfy { seen["ios-\($0)"] != nil }
            })
            let seen = try await arrivals()
            return sent.compactMap { text, at in seen["ios-\(text)"].map { $0.timeIntervalSince(at) } }
        }

        /// Whether every FCM message of `phases` has arrived, once the provider answers again (the hung
        /// requests after their deadline, as retries on new connections).
        func allArrived(_ phases: [[String: Date]]) async throws -> Bool {
            try await GorushEndToEndTests.eventually(timeout: .seconds(120)) {
                let seen = try await arrivals()
                return phases.allSatisfy { $0.keys.allSatisfy { seen["android-\($0)"] != nil } }
            }
        }

        // A busy machine's load changes between the healthy and the hanging phase (CI runs the suite in
        // parallel), so a pair of phases that misses the target is measured again after the provider has
        // recovered, up to three times. A lane held by the hung provider's rounds misses it every time: it
        // costs the requests' 30-second deadline.
        var phases: [[String: Date]] = []
        var figures: [(before: Double, during: Double)] = []
        for attempt in 1...3 {
            if attempt > 1 {
                try FileManager.default.removeItem(atPath: flag)
                #expect(try await allArrived(phases))
            }
            let healthy = try await steadyLoad("healthy\(attempt)", for: .seconds(2))
            let before = Self.p99(try await latencies(healthy))
            _ = FileManager.default.createFile(atPath: flag, contents: nil)
            let hung = try await steadyLoad("hung\(attempt)", for: .seconds(3))
            let during = Self.p99(try await latencies(hung))
            phases += [healthy, hung]
            figures.append((before, during))
            print("APNs app p99 delivery latency: \(before) s with the FCM provider healthy, \(during) s with it hanging")
            if during <= before * 2 + 0.05 { break }
        }
        #expect(figures.contains { $0.during <= $0.before * 2 + 0.05 }, "p99s (s): \(figures)")

        // The provider answers again: everything accepted for it arrives.
        try FileManager.default.removeItem(atPath: flag)
        let everything = try await allArrived(phases)
        #expect(everything)
    }
}
