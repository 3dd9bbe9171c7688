import Foundation
import Testing

/// `deploy/pushgate.service`, checked by systemd's own tools, and the signal its `ExecReload` sends.
@Suite("systemd unit")
struct SystemdUnitTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `systemd-analyze` (Debian's `systemd` package, which scripts/test installs).
    static func systemdAnalyze() throws -> String {
        let path = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(path, "systemd-analyze is missing: install Debian's systemd package (scripts/test does)")
    }

    /// A copy of the unit, named as installed, whose `ExecStart` runs the binary under test: `verify`
    /// checks that the command exists, and `/usr/local/bin/pushgate` is where an operator installs it,
    /// not where this build put it. Nothing else is changed.
    static func unitUnderTest(in directory: TemporaryDirectory) throws -> String {
        let unit = try String(contentsOf: Self.repository.appendingPathComponent("deploy/pushgate.service"), encoding: .utf8)
        let start = "ExecStart=/usr/local/bin/pushgate "
        #expect(unit.components(separatedBy: start).count == 2, "the unit has one ExecStart of /usr/local/bin/pushgate")
        return try directory.write("pushgate.service", unit.replacingOccurrences(of: start, with: "ExecStart=\(GatewayProcess.binary) "))
    }

    @Test func verifyFindsNothingToSay() async throws {
        let directory = try TemporaryDirectory()
        let unit = try Self.unitUnderTest(in: directory)
        let result = try await ExternalProcess.run(try Self.systemdAnalyze(), ["verify", unit])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        // An unknown key or a value systemd cannot parse is only a warning ("…, ignoring"): any output fails.
        #expect(result.output.isEmpty && result.errors.isEmpty, "\(result.output)\(result.errors)")
    }

    @Test func theHardeningKeepsTheExposureLow() async throws {
        let directory = try TemporaryDirectory()
        let unit = try Self.unitUnderTest(in: directory)
        // systemd's own score, 0 (locked down) to 10 (exposed), in tenths for --threshold: what stays
        // exposed is the network the gateway serves on, which it needs. 2.0 and below is "OK".
        let result = try await ExternalProcess.run(try Self.systemdAnalyze(), ["security", "--offline=yes", "--threshold=20", "--no-pager", unit])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        let settings = try String(contentsOfFile: unit, encoding: .utf8).split(separator: "\n").map(String.init)
        for required in [
            "DynamicUser=yes", "StateDirectory=pushgate", "WorkingDirectory=/var/lib/pushgate", "ExecReload=/bin/kill -HUP $MAINPID",
            "ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
            "SystemCallFilter=@system-service", "LimitNOFILE=65536",
        ] {
            #expect(settings.contains(required), "\(required) is missing")
        }
        #expect(settings.contains { $0.hasPrefix("ExecStart=") && $0.hasSuffix(" serve --config /etc/pushgate/pushgate.yaml") })
    }

    /// `systemctl reload` sends SIGHUP, whose default action ends a process: the gateway reloads and stays up.
    @Test func aHangUpSignalReloadsAndLeavesTheGatewayRunning() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", ServeProcessTests.config())
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        let listener = try #require(try await gateway.waitForListeners().first)
        gateway.signal(SIGHUP)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, !gateway.logEvents.contains(where: { $0["msg"]?.hasPrefix("configuration reloaded") == true }) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(gateway.logEvents.contains { $0["msg"]?.hasPrefix("configuration reloaded") == true }, "\(gateway.errors)")
        #expect(try await ServeProcessTests.get("http://127.0.0.1:\(listener.port)/health").status == 200, "\(gateway.errors)")
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(30)) == 0, "\(gateway.errors)")
    }
}
