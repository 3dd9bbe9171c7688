import Foundation
import Testing

/// Runs scripts with the reference Python (http_ece, py_vapid, cryptography from PyPI) named by
/// `PUSHGATE_TEST_PYTHON`. Tests that need it fail, never skip, when it is not set.
enum PythonReference {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The interpreter, or a failure explaining how to provide one.
    static func interpreter() throws -> String {
        guard let path = ProcessInfo.processInfo.environment["PUSHGATE_TEST_PYTHON"], !path.isEmpty else {
            throw Failure(description: "PUSHGATE_TEST_PYTHON is not set: it must name a Python with http_ece, py_vapid and cryptography installed (e.g. PUSHGATE_TEST_PYTHON=/work/main/.venv/bin/python)")
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure(description: "PUSHGATE_TEST_PYTHON=\(path) is not an executable file")
        }
        return path
    }

    /// Runs `script` with `arguments` and returns its standard output, trimmed.
    static func run(_ script: String, arguments: [String] = []) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.interpreter())
        process.arguments = ["-c", script] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "reference Python failed (\(process.terminationStatus)): \(String(decoding: errorData, as: UTF8.self))")
        }
        return String(decoding: outputData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hex.
    var hex: String { self.map { String(format: "%02x", $0) }.joined() }

    /// Bytes from hex text; nil when it is not hex.
    init?(hex: String) {
        let characters = Array(hex.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2)
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let byte = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self = bytes
    }
}
