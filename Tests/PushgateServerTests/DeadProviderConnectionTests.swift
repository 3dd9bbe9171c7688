import Foundation
import PushgateTestSupport
import Testing

/// Provider connections that die without a word (a NAT or a load balancer forgets them: no FIN, no RST),
/// caused for real: the gateway and the sandbox's emulators run in a network namespace of the test's own
/// (`unshare -n`), and nftables drops every packet of the connection the gateway had open. Every
/// notification sent after that arrives at the emulator exactly once, over a new connection.
@Suite("Dead provider connections, in a network namespace", .enabled(if: getuid() == 0, "a network namespace of its own (unshare -n) and nftables need root"))
struct DeadProviderConnectionTests {
    static let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("NetworkFailures/dead_connection.py").path

    struct Report: Decodable {
        var dropped_connections: [Int]
        var connections_after: [Int]
        var recovered_after_seconds: Double
        var arrivals: [String: Int]
        var latest_wait_seconds: Double
        var apns_pings_missed: Int?
        var connections_opened: Int?
    }

    /// Runs the driver for `provider` in a namespace of its own and returns what it measured.
    static func run(_ provider: String) async throws -> Report {
        let directory = try TemporaryDirectory()
        let result = try await ExternalProcess.run(
            "/usr/bin/unshare", ["-n", "--", try PythonReference.interpreter(), Self.driver, GatewayProcess.binary, directory.path("run"), provider]
        )
        guard result.status == 0, let line = result.output.split(separator: "\n").last else {
            let log = (try? String(contentsOfFile: directory.path("run/gateway.log"), encoding: .utf8)) ?? ""
            throw ProcessError("dead_connection.py \(provider) failed (\(result.status)): \(result.errors)\ngateway log:\n\(log.suffix(8000))")
        }
        print("dead_connection.py \(provider): \(line)")
        return try JSONDecoder().decode(Report.self, from: Data(line.utf8))
    }

    @Test func aSilentlyDeadAPNsConnectionIsFoundByPingAndReplaced() async throws {
        let report = try await Self.run("apns")
        // Exactly once each: nothing lost, nothing sent twice.
        #expect(report.arrivals.count == 11 && report.arrivals.values.allSatisfy { $0 == 1 }, "\(report.arrivals)")
        // A new connection carried them. (The dead one may still be listed for a few seconds while TLS waits
        // for a close_notify that never comes.)
        #expect(!Set(report.connections_after).subtracting(report.dropped_connections).isEmpty)
        // Found by its unanswered PING, and replaced: the metrics say so.
        #expect((report.apns_pings_missed ?? 0) >= 1 && (report.connections_opened ?? 0) >= 2, "\(report)")
        // The driver's ping_timeout is 2 s: the silence is noticed within a check (1 s) and that, the PING
        // goes unanswered for that, and the outbox tries again within its first backoff (1 s). A generous
        // bound for a loaded machine, far below the outbox's 30-second delivery deadline.
        #expect(report.recovered_after_seconds < 20, "recovered after \(report.recovered_after_seconds) s")
    }

    @Test func aSilentlyDeadFCMConnectionIsClosedAtTheRequestDeadlineAndNotReused() async throws {
        let report = try await Self.run("fcm")
        #expect(report.arrivals.count == 11 && report.arrivals.values.allSatisfy { $0 == 1 }, "\(report.arrivals)")
        // New connections carried them. (An idle pooled connection that was dead too may still be listed:
        // it is never used while a live one is idle, and keepalive ends it within about a minute.)
        #expect(!Set(report.connections_after).subtracting(report.dropped_connections).isEmpty)
        // The app's connection metrics count the new connection.
        #expect((report.connections_opened ?? 0) >= 2, "\(report)")
        // The request caught on the dead connection waits for its deadline (the outbox's 30 s), then goes
        // again on a new connection.
        #expect(report.recovered_after_seconds < 60, "recovered after \(report.recovered_after_seconds) s")
    }
}
