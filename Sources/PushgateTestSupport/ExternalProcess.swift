public import Foundation

/// Runs another program to completion without blocking Swift concurrency's threads: the waiting happens
/// on a dispatch thread, so tests that call reference implementations do not starve the others.
public enum ExternalProcess {
    /// How a program ended and what it wrote.
    public struct Result: Sendable {
        /// The exit status.
        public let status: Int32
        /// Standard output.
        public let output: String
        /// Standard error.
        public let errors: String
    }

    /// Runs `executable` with `arguments`.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = arguments
                if let environment { process.environment = environment }
                let output = Pipe()
                let errors = Pipe()
                process.standardOutput = output
                process.standardError = errors
                process.standardInput = FileHandle.nullDevice
                do {
                    try process.run()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                // Standard error is drained on its own thread so that neither pipe can fill and stall the child.
                let errorData = LockedData()
                let drain = DispatchGroup()
                drain.enter()
                DispatchQueue.global().async {
                    errorData.set(errors.fileHandleForReading.readDataToEndOfFile())
                    drain.leave()
                }
                let outputData = output.fileHandleForReading.readDataToEndOfFile()
                drain.wait()
                process.waitUntilExit()
                continuation.resume(
                    returning: Result(
                        status: process.terminationStatus,
                        output: String(decoding: outputData, as: UTF8.self),
                        errors: String(decoding: errorData.get(), as: UTF8.self)
                    )
                )
            }
        }
    }
}

/// Data handed from one dispatch thread to another.
private final class LockedData: @unchecked Sendable {
    // Guarded by `lock`; written once by the draining thread, read after `DispatchGroup.wait()`.
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { self.lock.withLock { self.data = value } }
    func get() -> Data { self.lock.withLock { self.data } }
}
