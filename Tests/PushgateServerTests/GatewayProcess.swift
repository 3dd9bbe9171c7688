import Foundation
import Synchronization
import Testing

/// The real `pushgate` binary, run as a child process, with its standard error captured line by line.
final class GatewayProcess: Sendable {
    struct Exit: Sendable {
        let status: Int32
        let output: String
        let errors: String
    }

    /// The binary: `PUSHGATE_BINARY` (set by scripts/test), else the debug build next to the sources.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["PUSHGATE_BINARY"] { return path }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/pushgate").path
    }

    private let process: Process
    private let stderr = CapturedText()
    private let stdout = CapturedText()
    /// Set once a test signals the process or waits for it to end: an exit after that is expected.
    private let exitExpected = Atomic(false)

    /// Starts the pushgate binary, or `executable` when given (another server a test needs).
    init(arguments: [String], environment: [String: String] = [:], directory: String? = nil, executable: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? Self.binary)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["PUSHGATE_CONFIG"] = nil
        env["SYGNAL_CONF"] = nil
        env.merge(environment) { _, new in new }
        process.environment = env
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let errorPipe = Pipe()
        let outputPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = outputPipe
        process.standardInput = FileHandle.nullDevice
        self.process = process
        try process.run()
        // A thread of its own per pipe, reading until the process closes it: Foundation's
        // `readabilityHandler` puts a dispatch source on each pipe, and with the many processes these tests
        // start at once libdispatch's event loop crashed the test process (Bad pointer dereference in
        // `_dispatch_event_loop_drain`, swift-corelibs-foundation#3276).
        for (pipe, sink) in [(errorPipe, self.stderr), (outputPipe, self.stdout)] {
            let handle = pipe.fileHandleForReading
            Thread {
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    sink.append(data)
                }
                sink.end()
            }.start()
        }
    }

    /// Runs a command to completion.
    static func run(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil) async throws -> Exit {
        let process = try GatewayProcess(arguments: arguments, environment: environment, directory: directory)
        guard let status = await process.waitForExit(timeout: .seconds(30)) else {
            process.kill()
            throw ProcessError("pushgate \(arguments.joined(separator: " ")) did not finish")
        }
        return Exit(status: status, output: process.output, errors: process.errors)
    }

    /// The gateway's process id.
    var processIdentifier: Int32 { self.process.processIdentifier }
    var errors: String { self.stderr.text }
    var output: String { self.stdout.text }

    /// The JSON log lines written so far (with `log.format: json`).
    var logEvents: [[String: String]] {
        self.errors.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String]
        }
    }

    /// Waits until the gateway logs `count` listeners and returns their ports by listener name.
    func waitForListeners(count: Int = 1, timeout: Duration = .seconds(60)) async throws -> [(name: String, host: String, port: Int)] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let listeners = self.logEvents.filter { $0["msg"] == "listening" }.compactMap { event -> (String, String, Int)? in
                guard let name = event["listener"], let host = event["address"], let port = event["port"].flatMap(Int.init) else { return nil }
                return (name, host, port)
            }
            if listeners.count >= count { return listeners.map { (name: $0.0, host: $0.1, port: $0.2) } }
            if !self.process.isRunning {
                // The error carries the log: no second report when the test lets go of the process.
                self.exitExpected.store(true, ordering: .relaxed)
                throw ProcessError("pushgate exited with \(self.process.terminationStatus) before listening:\n\(self.errors)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ProcessError("pushgate did not start listening in time:\n\(self.errors)")
    }

    /// The names of the process's threads (Linux: `/proc/PID/task/*/comm`; empty elsewhere).
    var threadNames: [String] {
        let tasks = "/proc/\(self.process.processIdentifier)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return ids.compactMap { id in
            (try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    func signal(_ signal: Int32) {
        self.exitExpected.store(true, ordering: .relaxed)
        Foundation.kill(self.process.processIdentifier, signal)
    }

    /// Stops the process. A process that already ended without being signalled or awaited died during
    /// the test (a crash, or a kill from outside): that is recorded as an issue with its log, since the
    /// test's own failure would only say that a connection was refused.
    func kill() {
        if self.process.isRunning {
            self.signal(SIGKILL)
        } else if !self.exitExpected.load(ordering: .relaxed) {
            self.exitExpected.store(true, ordering: .relaxed)
            let status = self.process.terminationStatus
            let reason = self.process.terminationReason == .uncaughtSignal ? "signal \(status)" : "status \(status)"
            Issue.record("\(self.process.executableURL?.lastPathComponent ?? "process") ended by itself with \(reason) during the test; its standard error:\n\(self.errors.suffix(20_000))")
        }
    }

    /// Waits for the process to end: its exit status, or 128 plus the signal that ended it (as a shell
    /// gives it: a trap is 132, SIGILL); nil when it is still running after `timeout`.
    func waitForExit(timeout: Duration) async -> Int32? {
        self.exitExpected.store(true, ordering: .relaxed)
        let deadline = ContinuousClock.now + timeout
        while self.process.isRunning {
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
        // Everything it wrote is read once both pipes are at their end (later, if a process it started
        // still holds them: then at most 5 s more).
        let drained = ContinuousClock.now + .seconds(5)
        while !(self.stderr.isComplete && self.stdout.isComplete), ContinuousClock.now < drained {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let status = self.process.terminationStatus
        return self.process.terminationReason == .uncaughtSignal ? 128 + status : status
    }

    deinit { self.kill() }
}

struct ProcessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Text a pipe delivers, collected from its reading thread.
final class CapturedText: Sendable {
    private let storage = Mutex("")

    func append(_ data: Data) {
        self.storage.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }

    var text: String { self.storage.withLock { $0 } }

    private let ended = Atomic(false)

    /// Called once the pipe is read to its end.
    func end() { self.ended.store(true, ordering: .releasing) }

    /// Whether everything written to the pipe has been appended.
    var isComplete: Bool { self.ended.load(ordering: .acquiring) }
}
