import Foundation
import PushgateAPNs
import PushgateCore
import PushgateSandbox
import PushgateTestSupport
import Testing

/// The provider's HTTP/2 client against a third-party server: Python's h2 (the HTTP/2 stack of aioapns
/// and httpx) over real TLS, with limits far below APNs' to make the client use every rule it keeps.
///
/// The interpreter comes from `PUSHGATE_TEST_PYTHON` (a venv with aioapns, which brings h2).
@Suite("APNs client with h2")
struct H2ServerCrossCheckTests {
    /// A server that allows two streams at a time, a 100-byte window per stream and a 256-byte HPACK table,
    /// pings the client, answers each request 200, and then prints what it saw. h2 raises an error (and
    /// the script reports it) for anything the client sends beyond those limits.
    static let script = """
        import asyncio, json, ssl, sys
        import h2.config, h2.connection, h2.events, h2.exceptions, h2.settings

        cert_path, key_path, port_path, expected = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
        records, problems, pings = [], [], []

        async def serve(reader, writer, done):
            connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
            connection.local_settings = h2.settings.Settings(client=False, initial_values={
                h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 2,
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 100,
                h2.settings.SettingCodes.HEADER_TABLE_SIZE: 256,
            })
            connection.initiate_connection()
            connection.ping(b"pushgate")
            writer.write(connection.data_to_send())
            streams, open_at_once = {}, 0
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        break
                    for event in connection.receive_data(data):
                        if isinstance(event, h2.events.RequestReceived):
                            streams[event.stream_id] = {"headers": [list(pair) for pair in event.headers], "body": b""}
                            open_at_once = max(open_at_once, len(streams))
                        elif isinstance(event, h2.events.DataReceived):
                            streams[event.stream_id]["body"] += event.data
                            connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                        elif isinstance(event, h2.events.StreamEnded):
                            request = streams.pop(event.stream_id)
                            records.append({"stream": event.stream_id, "headers": request["headers"],
                                            "body": request["body"].decode(), "open_at_once": open_at_once})
                            connection.send_headers(event.stream_id, [(":status", "200"), ("apns-id", "0a0b0c0d-0000-0000-0000-000000000000")], end_stream=True)
                            if len(records) >= expected:
                                done.set()
                        elif isinstance(event, h2.events.PingAckReceived):
                            pings.append(event.ping_data.decode())
                    writer.write(connection.data_to_send())
                    await writer.drain()
            except h2.exceptions.ProtocolError as error:
                problems.append(repr(error))
                done.set()
            writer.close()

        async def main():
            done = asyncio.Event()
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(cert_path, key_path)
            context.set_alpn_protocols(["h2"])
            server = await asyncio.start_server(lambda r, w: serve(r, w, done), "127.0.0.1", 0, ssl=context)
            with open(port_path + ".tmp", "w") as port_file:
                port_file.write(str(server.sockets[0].getsockname()[1]))
            import os
            os.rename(port_path + ".tmp", port_path)
            try:
                await asyncio.wait_for(done.wait(), 120)
            except asyncio.TimeoutError:
                problems.append("timed out with %d of %d requests" % (len(records), expected))
            await asyncio.sleep(0.2)  # the last answers leave
            server.close()
            print(json.dumps({"records": records, "problems": problems, "pings": pings}), flush=True)

        asyncio.run(main())
        """

    struct Report: Decodable {
        struct Record: Decodable {
            var stream: Int
            var headers: [[String]]
            var body: String
            var open_at_once: Int
        }

        var records: [Record]
        var problems: [String]
        var pings: [String]
    }

    @Test func requestsKeepToTheStreamLimitTheWindowsAndTheTableSizeOfH2() async throws {
        let python = try PythonReference.interpreter()
        try await EmulatorHarness.withEmulator { harness in
            let directory = try TemporaryDirectory()
            let authority = harness.emulator.certificateAuthority
            let certificate = try directory.write("server.pem", authority.serverCertificatePEM)
            let key = try directory.write("server.key", authority.serverPrivateKeyPEM)
            let script = try directory.write("h2server.py", Self.script)
            let portPath = directory.path("port")
            let count = 12
            async let server = ExternalProcess.run(python, [script, certificate, key, portPath, String(count)])

            var port: Int?
            for _ in 0..<1200 where port == nil {
                port = (try? String(contentsOfFile: portPath, encoding: .utf8)).flatMap { Int($0) }
                if port == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let provider = try APNsConnectionTests.provider(harness, port: try #require(port, "the h2 server did not start"))
            // Bodies of over 300 bytes: each needs several windows of 100.
            let text = String(repeating: "window ", count: 50)
            let notification = PushNotification(kind: .alert, priority: .high, payload: .object(["aps": .object(["alert": .string(text)])]))
            let outcomes = await withTaskGroup(of: DeliveryOutcome.self) { group in
                for index in 0..<count {
                    group.addTask { await provider.deliver(notification, to: deviceToken(String(format: "%02x", index)), deadline: .soon) }
                }
                return await group.reduce(into: [DeliveryOutcome]()) { $0.append($1) }
            }
            try await provider.shutdown()
            let result = try await server
            #expect(result.status == 0, "\(result.errors)")
            let report = try JSONDecoder().decode(Report.self, from: Data(result.output.utf8))

            #expect(outcomes.count == count && outcomes.allSatisfy { $0 == .delivered }, "\(outcomes)")
            #expect(report.problems.isEmpty, "\(report.problems)")
            // One connection per event loop, each pinged once and answering.
            #expect(!report.pings.isEmpty && report.pings.allSatisfy { $0 == "pushgate" })
            #expect(report.records.count == count)
            #expect(report.records.allSatisfy { $0.open_at_once <= 2 })
            for record in report.records {
                let headers = Dictionary(record.headers.map { ($0[0], $0[1]) }, uniquingKeysWith: { first, _ in first })
                #expect(record.headers.prefix(4).map { $0[0] } == [":method", ":scheme", ":path", ":authority"])
                #expect(headers[":method"] == "POST" && headers[":scheme"] == "https")
                #expect(headers[":path"]?.hasPrefix("/3/device/") == true)
                #expect(headers[":authority"] == "127.0.0.1:\(port!)")
                #expect(headers["authorization"]?.hasPrefix("bearer ey") == true)
                #expect(headers["apns-topic"] == harness.emulator.bundleID)
                #expect(headers["apns-push-type"] == "alert" && headers["apns-priority"] == "10")
                #expect(headers["content-length"] == String(record.body.utf8.count))
                let body = try JSONDecoder().decode([String: [String: String]].self, from: Data(record.body.utf8))
                #expect(body["aps"]?["alert"] == text)
            }
            let paths = Set(report.records.compactMap { record in record.headers.first { $0[0] == ":path" }?[1] })
            #expect(paths == Set((0..<count).map { "/3/device/" + deviceToken(String(format: "%02x", $0)) }))
        }
    }
}
