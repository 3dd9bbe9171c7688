import Foundation
import PushgateCore
import PushgateTestSupport
import Testing

/// Provider requests go through the configured HTTP proxy with CONNECT, as Sygnal's `proxy` key says.
@Suite("Outbound proxy, end to end")
struct OutboundProxyEndToEndTests {
    /// A minimal HTTP CONNECT proxy that logs each request line (and whether it carried credentials).
    static let proxyScript = """
        import asyncio, sys
        log = open(sys.argv[2], "a")
        async def pipe(reader, writer):
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        break
                    writer.write(data)
                    await writer.drain()
            except Exception:
                pass
            finally:
                writer.close()
        async def handle(reader, writer):
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            lines = head.split(b"\\r\\n")
            line = lines[0].decode()
            authorised = any(h.lower().startswith(b"proxy-authorization: basic ") for h in lines[1:])
            log.write(line + (" with-credentials" if authorised else "") + "\\n")
            log.flush()
            method, target, _ = line.split(" ")
            if method != "CONNECT":
                writer.write(b"HTTP/1.1 405 Method Not Allowed\\r\\n\\r\\n")
                writer.close()
                return
            host, port = target.rsplit(":", 1)
            upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\\r\\n\\r\\n")
            await writer.drain()
            await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))
        async def main():
            server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[1]))
            print("ready", flush=True)
            async with server:
                await server.serve_forever()
        asyncio.run(main())
        """

    @Test(.timeLimit(.minutes(2)))
    func apnsRequestsTunnelThroughTheProxyWithItsCredentials() async throws {
        let python = try PythonReference.interpreter()
        let directory = try TemporaryDirectory()
        let sandbox = try GatewayProcess(arguments: ["sandbox", "--directory", directory.path("sandbox")], directory: directory.url.path)
        defer { sandbox.signal(SIGTERM) }
        let port = try #require(FreeLoopbackPort.pick())
        let proxyLog = directory.path("proxy.log")
        let proxy = try GatewayProcess(arguments: ["-c", Self.proxyScript, String(port), proxyLog], directory: directory.url.path, executable: python)
        defer { proxy.signal(SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !(proxy.output.contains("ready") && sandbox.output.contains("Deliveries:")) {
            // The sandbox prints its addresses once its files are written and its emulators start.
            try await Task.sleep(for: .milliseconds(50))
        }
        let apps = try String(contentsOfFile: directory.path("sandbox/pushgate-sandbox.yaml"), encoding: .utf8)
        let config = try directory.write("pushgate.yaml", "proxy: 'http://pushgate:secret@127.0.0.1:\(port)'\n" + apps)
        let result = try await GatewayProcess.run([
            "send", "--config", config, "--app", "demo.apns", "--token", String(repeating: "a1", count: 32), "--alert", "through the proxy",
        ])
        #expect(result.status == 0, "\(result.output) \(result.errors)")
        #expect(result.output.contains(#""outcome":"delivered""#))
        let apnsPort = try #require(apps.split(separator: "\n").first { $0.contains("base_url: https://") }?.split(separator: ":").last.map(String.init))
        let logged = try String(contentsOfFile: proxyLog, encoding: .utf8)
        #expect(logged.contains("CONNECT 127.0.0.1:\(apnsPort) HTTP/1.1 with-credentials"), "\(logged)")
    }

    /// Starts the CONNECT proxy on `port`, logging to `log`, and waits until it listens.
    static func startProxy(port: Int, log: String, directory: TemporaryDirectory) async throws -> GatewayProcess {
        let proxy = try GatewayProcess(
            arguments: ["-c", Self.proxyScript, String(port), log], directory: directory.url.path, executable: try PythonReference.interpreter()
        )
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !proxy.output.contains("ready") { try await Task.sleep(for: .milliseconds(20)) }
        return proxy
    }

    @Test(.timeLimit(.minutes(4)))
    func deliveriesResumeByThemselvesWhenTheProxyRestartsUnderLoad() async throws {
        let directory = try TemporaryDirectory()
        let sandbox = try GatewayProcess(arguments: ["sandbox", "--directory", directory.path("sandbox")], directory: directory.url.path)
        defer { sandbox.signal(SIGTERM) }
        let proxyPort = try #require(FreeLoopbackPort.pick())
        let proxyLog = directory.path("proxy.log")
        var proxy = try await Self.startProxy(port: proxyPort, log: proxyLog, directory: directory)
        let ready = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < ready, !sandbox.output.contains("Deliveries:") { try await Task.sleep(for: .milliseconds(50)) }
        let deliveriesURL = try #require(sandbox.output.split(separator: "\n").first { $0.hasPrefix("Deliveries:") }?.split(separator: " ").last)
        let apps = try String(contentsOfFile: directory.path("sandbox/pushgate-sandbox.yaml"), encoding: .utf8)
        let fcmToken = try #require(apps.firstMatch(of: /FCM ([^,]+),/)?.1)
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            proxy: 'http://127.0.0.1:\(proxyPort)'
            gorush: {ios_app: demo.apns, android_app: demo.fcm, allow_unauthenticated: true}

            """ + apps)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        let port = try #require(try await gateway.waitForListeners().first).port

        // One APNs and one FCM notification every 50 ms; the proxy dies (SIGKILL: its tunnels end at once)
        // after the tenth pair and comes back a second later on the same port.
        let total = 40
        var connectsBefore = 0
        var restarted = ContinuousClock.now
        func connects() throws -> [Substring] {
            try String(contentsOfFile: proxyLog, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("CONNECT") }
        }
        for index in 0..<total {
            if index == 10 {
                connectsBefore = try connects().count
                proxy.signal(SIGKILL)
                _ = await proxy.waitForExit(timeout: .seconds(10))
                try await Task.sleep(for: .seconds(1))
                proxy = try await Self.startProxy(port: proxyPort, log: proxyLog, directory: directory)
                restarted = ContinuousClock.now
            }
            let body = #"{"notifications":[{"tokens":["\#(String(repeating: "a1", count: 32))"],"platform":1,"message":"proxied-\#(index)","topic":"im.pushgate.sandbox"},{"tokens":["\#(fcmToken)"],"platform":2,"message":"proxied-\#(index)"}]}"#
            #expect(try await GorushEndToEndTests.post(port, "/api/push", body).status == 200)
            try await Task.sleep(for: .milliseconds(50))
        }
        defer { proxy.signal(SIGTERM) }

        /// How often each message arrived at each emulator.
        func arrivals() async throws -> [String: Int] {
            guard case .array(let listing) = try JSONParser.parse(Array(try await GorushEndToEndTests.getURL(String(deliveriesURL)).utf8)) else {
                return [:]
            }
            var counts: [String: Int] = [:]
            for delivery in listing where delivery["status"] == 200 {
                let provider = delivery["provider"]?.stringValue ?? "?"
                for match in (delivery["body"]?.stringValue ?? "").matches(of: /proxied-\d+/) {
                    counts["\(provider) \(match.0)", default: 0] += 1
                }
            }
            return counts
        }
        let everything = try await GorushEndToEndTests.eventually(timeout: .seconds(120)) { try await arrivals().count == 2 * total }
        let counts = try await arrivals()
        #expect(everything, "missing: \((0..<total).flatMap { ["apns proxied-\($0)", "fcm proxied-\($0)"] }.filter { counts[$0] == nil })")
        print("proxy restart: everything delivered \(ContinuousClock.now - restarted) after the proxy came back")
        // Both back ends made their connections again through the restarted proxy.
        let apnsPort = try #require(apps.firstMatch(of: /base_url: https:\/\/127\.0\.0\.1:(\d+)/)?.1)
        let fcmPort = try #require(apps.firstMatch(of: /base_url: http:\/\/127\.0\.0\.1:(\d+)/)?.1)
        let later = try connects().dropFirst(connectsBefore)
        #expect(later.contains { $0.hasPrefix("CONNECT 127.0.0.1:\(apnsPort) ") }, "\(later)")
        #expect(later.contains { $0.hasPrefix("CONNECT 127.0.0.1:\(fcmPort) ") }, "\(later)")
    }
}
