import Foundation
import PushgateSandbox
import PushgateTestSupport
import Testing

/// A PostgreSQL cluster of one test's own, which the test may stop and start (the shared server that
/// scripts/test starts serves every other test at once). Its binaries come from `PUSHGATE_TEST_PG_BIN`,
/// which scripts/test sets; as root the cluster belongs to the `postgres` system user, as initdb requires.
final class ThrowawayPostgres: Sendable {
    let directory: TemporaryDirectory
    let port: Int
    private let bin: String

    /// `postgres://pushgate@127.0.0.1:PORT/pushgate?sslmode=disable`
    var url: String { "postgres://pushgate@127.0.0.1:\(self.port)/pushgate?sslmode=disable" }

    /// Creates and starts a cluster with a `pushgate` database on a free loopback port.
    init() async throws {
        self.bin = try #require(ProcessInfo.processInfo.environment["PUSHGATE_TEST_PG_BIN"], "run with scripts/test (it sets PUSHGATE_TEST_PG_BIN)")
        self.directory = try TemporaryDirectory()
        self.port = try #require(FreePort.pick(), "no free port on 127.0.0.1")
        if getuid() == 0 {
            try await Self.command("/bin/chown", ["postgres", self.directory.url.path])
        }
        try await self.pg("initdb", ["-D", self.data, "-U", "pushgate", "--auth=trust", "-E", "UTF8"])
        try await self.start()
        try await self.pg("createdb", ["-h", "127.0.0.1", "-p", "\(self.port)", "-U", "pushgate", "pushgate"])
    }

    private var data: String { self.directory.path("data") }

    /// Starts the server and waits until it accepts connections.
    func start() async throws {
        try await self.pg("pg_ctl", [
            "-D", self.data, "-l", self.directory.path("server.log"), "-w", "-t", "60", "-o",
            "-p \(self.port) -k \(self.directory.url.path) -c listen_addresses=127.0.0.1 -c fsync=off", "start",
        ])
    }

    /// Stops the server (fast shutdown: sessions are ended, as when a database is taken down).
    func stop() async throws {
        try await self.pg("pg_ctl", ["-D", self.data, "-m", "fast", "-w", "-t", "60", "stop"])
    }

    private func pg(_ tool: String, _ arguments: [String]) async throws {
        let path = self.bin + "/" + tool
        if getuid() == 0 {
            try await Self.command("/usr/sbin/runuser", ["-u", "postgres", "--", path] + arguments)
        } else {
            try await Self.command(path, arguments)
        }
    }

    private static func command(_ executable: String, _ arguments: [String]) async throws {
        // Not Foundation's Process: pg_ctl's server outlives it, and Process may then miss its exit.
        let result = try await SpawnedCommand.run([executable] + arguments)
        guard result.status == 0 else {
            throw ProcessError("\(executable) \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.output)")
        }
    }

    /// Stops the server at once; call when the test ends, whatever its outcome.
    func remove() async {
        _ = try? await self.pg("pg_ctl", ["-D", self.data, "-m", "immediate", "-w", "stop"])
    }
}
