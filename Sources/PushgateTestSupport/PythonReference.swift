import Foundation

/// The Python interpreter with the reference implementations (http_ece, py_vapid, cryptography,
/// google-auth, aioapns from PyPI) that scripts/test installs and names in `PUSHGATE_TEST_PYTHON`.
/// Tests that need it fail, never skip, when it is missing.
public enum PythonReference {
    /// Why the reference could not be used.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The interpreter's path.
    public static func interpreter() throws -> String {
        guard let path = ProcessInfo.processInfo.environment["PUSHGATE_TEST_PYTHON"], !path.isEmpty else {
            throw Failure(description: "PUSHGATE_TEST_PYTHON is not set: run the suite with scripts/test, which installs the Python reference implementations into .build-venv (or set it to such a Python)")
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure(description: "PUSHGATE_TEST_PYTHON=\(path) is not an executable file")
        }
        return path
    }

    /// Runs `script` with `arguments` and returns its whole result.
    public static func execute(_ script: String, arguments: [String] = []) async throws -> ExternalProcess.Result {
        try await ExternalProcess.run(try Self.interpreter(), ["-c", script] + arguments)
    }

    /// Runs `script` with `arguments`; returns its standard output, trimmed.
    /// - Throws: ``Failure`` when the script exits with a non-zero status.
    public static func run(_ script: String, arguments: [String] = []) async throws -> String {
        let result = try await Self.execute(script, arguments: arguments)
        guard result.status == 0 else {
            throw Failure(description: "reference Python failed (\(result.status)): \(result.errors)")
        }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
