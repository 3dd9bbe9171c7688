import Foundation
import PushgateSandbox
import PushgateTestSupport
import Testing

/// The emulator against a third-party client: aioapns (Sygnal's APNs library) over real TLS and HTTP/2.
///
/// The interpreter comes from `PUSHGATE_TEST_PYTHON` (a venv with aioapns); without it the test fails.
@Suite("APNs emulator with aioapns")
struct AioapnsCrossCheckTests {
    /// Points aioapns at the emulator: its production protocol class names the host and port it
    /// connects to (and sends as `host`), and its `ssl_context` parameter lets it trust the sandbox CA.
    static let script = """
        import asyncio, json, ssl, sys
        import aioapns
        import aioapns.connection as connection

        key_path, key_id, team_id, topic, ca_path, port = sys.argv[1:7]
        tokens = sys.argv[7:]
        connection.APNsProductionClientProtocol.APNS_SERVER = "127.0.0.1"
        connection.APNsProductionClientProtocol.APNS_PORT = int(port)

        # Count connections: a response aioapns cannot parse (an empty DATA frame after a bodyless 200)
        # kills the connection, and the next notification then needs a new one.
        connections = 0
        original_connection_made = connection.APNsProductionClientProtocol.connection_made
        def counting_connection_made(self, transport):
            global connections
            connections += 1
            original_connection_made(self, transport)
        connection.APNsProductionClientProtocol.connection_made = counting_connection_made

        async def main():
            context = ssl.create_default_context(cafile=ca_path)
            with open(key_path) as key_file:
                key = key_file.read()  # aioapns 4 takes the key's contents
            client = aioapns.APNs(key=key, key_id=key_id, team_id=team_id, topic=topic, use_sandbox=False,
                                  ssl_context=context, max_connection_attempts=1)
            for token in tokens:
                request = aioapns.NotificationRequest(device_token=token, message={"aps": {"alert": "hello"}})
                result = await asyncio.wait_for(client.send_notification(request), 20)
                print(json.dumps({"token": token, "status": str(result.status), "successful": result.is_successful,
                                  "reason": result.description}), flush=True)
            print(json.dumps({"connections": connections}), flush=True)

        asyncio.run(main())
        """

    struct ScriptResult: Decodable, Equatable {
        var token: String
        var status: String
        var successful: Bool
        var reason: String?
    }

    @Test func aioapnsDeliversThroughTheEmulatorAndSeesUnregistered() async throws {
        let python = try PythonReference.interpreter()
        try await EmulatorHarness.withEmulator { harness in
            let directory = try TemporaryDirectory()
            let scriptPath = try directory.write("send.py", Self.script)
            let good = deviceToken()
            let dead = deviceToken("dead")
            let (status, output, errors) = try await Self.runProcess(
                python,
                [scriptPath, harness.keyPath, harness.emulator.keyID, harness.emulator.teamID, harness.emulator.bundleID,
                 harness.caPath, String(harness.port), good, dead, good]
            )
            #expect(status == 0, "aioapns script failed: \(errors)")
            var lines = output.split(separator: "\n")
            let connections = try JSONDecoder().decode([String: Int].self, from: Data((lines.popLast() ?? "").utf8))
            let results = try lines.map { line in
                try JSONDecoder().decode(ScriptResult.self, from: Data(line.utf8))
            }
            #expect(results == [
                ScriptResult(token: good, status: "200", successful: true, reason: nil),
                ScriptResult(token: dead, status: "410", successful: false, reason: "Unregistered"),
                ScriptResult(token: good, status: "200", successful: true, reason: nil),
            ])
            // Every answer was readable, so one HTTP/2 connection carried all three.
            #expect(connections == ["connections": 1], "aioapns needed new connections: \(errors)")
            let log = harness.emulator.log.all
            #expect(log.map(\.token) == [good, dead, good])
            #expect(log.map(\.status) == [200, 410, 200])
            #expect(log.map { $0.headers["http-version"] } == ["2", "2", "2"])
            #expect(log.allSatisfy { $0.headers["apns-topic"] == harness.emulator.bundleID })
        }
    }

    static func runProcess(_ executable: String, _ arguments: [String]) async throws -> (Int32, String, String) {
        let result = try await ExternalProcess.run(executable, arguments)
        return (result.status, result.output, result.errors)
    }
}
