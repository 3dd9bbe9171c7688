import Foundation
@_exported import PushgateTestSupport
import Logging
import Testing

enum TestLogging {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.tests")
        logger.logLevel = .critical
        return logger
    }()
}


/// A new, empty database on the suite's PostgreSQL server, for gateways that must not share one with other
/// tests (their outbox workers would claim each other's entries).
enum ScratchDatabase {
    /// Creates one named `<prefix>_<random>` and returns its URL.
    static func create(prefix: String) async throws -> String {
        let baseURL = try #require(ProcessInfo.processInfo.environment["PUSHGATE_TEST_POSTGRES_URL"], "run with scripts/test")
        let pgBin = try #require(ProcessInfo.processInfo.environment["PUSHGATE_TEST_PG_BIN"], "run with scripts/test")
        let name = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        let components = try #require(URLComponents(string: baseURL))
        let created = try await ExternalProcess.run(
            pgBin + "/psql",
            ["-h", components.host ?? "127.0.0.1", "-p", String(components.port ?? 5432), "-U", components.user ?? "pushgate", "-d", "postgres", "-qc", "CREATE DATABASE \(name)"]
        )
        #expect(created.status == 0, "\(created.errors)")
        var url = components
        url.path = "/" + name
        return try #require(url.string)
    }
}
