import AsyncHTTPClient
import Foundation
import Testing

/// Schemathesis (PyPI) against the real binary: it reads `GET /openapi.json` and sends generated requests,
/// valid and invalid, to every route and method there (and undocumented methods to every path), then checks
/// that no answer is a server error and that every answer has a documented status, content type, headers
/// and body schema, so every error comes back in its protocol's own shape.
///
/// The interpreter comes from `PUSHGATE_TEST_PYTHON` (scripts/test installs schemathesis into
/// .build-venv); without it the test fails, as the other reference tests do.
@Suite("Schemathesis against the gateway")
struct SchemathesisTests {
    /// What schemathesis checks on every answer.
    static let checks = [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        // Methods a path does not document must get 405 (`M_UNRECOGNIZED`, with `Allow`).
        "unsupported_method",
    ]

    @Test(.timeLimit(.minutes(3)))
    func everyRouteAndMethodAnswersInItsProtocolsShapeWithoutServerErrors() async throws {
        let python = try PythonReference.interpreter()
        let directory = try TemporaryDirectory()
        // The embedded defaults (no apps: the sandbox runs), on a free port, with a store of its own, and
        // gorush's routes served to callers without credentials.
        let config = try directory.write(
            "pushgate.yaml",
            ServeProcessTests.config().replacingOccurrences(of: "level: info", with: "level: notice")
                + "\ngorush: {ios_app: demo.apns, android_app: demo.fcm, huawei_app: demo.hms, allow_unauthenticated: true}\n"
        )
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        let listener = try #require(try await gateway.waitForListeners().first { $0.name == "http" })
        let base = "http://127.0.0.1:\(listener.port)"
        let health = try await ServeProcessTests.get(base + "/health")
        #expect(health.status == 200)

        let started = ContinuousClock.now
        let result = try await ExternalProcess.run(
            python,
            [
                "-m", "schemathesis.cli", "--no-color", "run", base + "/openapi.json",
                "--checks", Self.checks.joined(separator: ","),
                // Bounded so the run stays well under two minutes on a loaded 2-core machine.
                "--max-examples", "20",
                "--request-timeout", "10",
                "--generation-database", "none",
                "--suppress-health-check", "too_slow",
            ],
            environment: ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1", "COLUMNS": "160"]) { _, new in new }
        )
        let report = "schemathesis exited \(result.status) after \(ContinuousClock.now - started):\n\(result.output)\n\(result.errors)"
        #expect(result.status == 0, "\(report)\n--- gateway log ---\n\(gateway.errors)")
        // The gateway survived the run.
        #expect(try await ServeProcessTests.get(base + "/health").status == 200, "\(gateway.errors)")
    }
}
