import Foundation
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
}
