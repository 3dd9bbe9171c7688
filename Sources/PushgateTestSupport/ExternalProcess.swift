import Foundation
import Synchronization

/// Runs another program to completion on threads of its own: the waits for its output and its exit
/// happen on dedicated threads, so neither Swift concurrency's few threads nor Dispatch's shared worker
/// threads (which NIO's name resolution and other tests need) are held while a child process runs,
/// however slow a loaded machine makes it.
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let outputHandle = output.fileHandleForReading
        let errorHandle = errors.fileHandleForReading
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    try process.run()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                // Standard error is drained on a thread of its own so that neither pipe can fill and stall the child.
                let errorData = Mutex(Data())
                let drained = DispatchSemaphore(value: 0)
                let drain = Thread {
                    let data = errorHandle.readDataToEndOfFile()
                    errorData.withLock { $0 = data }
                    drained.signal()
                }
                drain.start()
                let outputData = outputHandle.readDataToEndOfFile()
                process.waitUntilExit()
                drained.wait()
                continuation.resume(
                    returning: Result(
                        status: process.terminationStatus,
                        output: String(decoding: outputData, as: UTF8.self),
                        errors: String(decoding: errorData.withLock { $0 }, as: UTF8.self)
                    )
                )
            }
            thread.start()
        }
    }
}
