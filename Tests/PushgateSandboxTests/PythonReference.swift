import Foundation
import Testing

/// Runs a script with the reference implementations' interpreter (`PUSHGATE_TEST_PYTHON`, set by
/// scripts/test) and returns its standard output.
enum PythonReference {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ script: String, arguments: [String] = []) throws -> String {
        guard let python = ProcessInfo.processInfo.environment["PUSHGATE_TEST_PYTHON"] else {
            throw Failure(description: "PUSHGATE_TEST_PYTHON is not set: run the suite with scripts/test, which installs the Python reference implementations")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python failed (\(process.terminationStatus)): \(String(decoding: errorData, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
