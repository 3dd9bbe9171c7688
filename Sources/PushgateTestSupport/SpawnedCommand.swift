import Foundation

/// Runs a command with `posix_spawn` and waits for it with `waitpid` on a thread of its own, its output
/// going to a file. For commands whose children outlive them (a database server a control tool starts),
/// where Foundation's `Process` may never notice the exit.
public enum SpawnedCommand {
    /// How the command ended and what it wrote (standard output and error together).
    public struct Result: Sendable {
        /// The exit status (128 + the signal number when a signal ended it).
        public let status: Int32
        /// Standard output and standard error.
        public let output: String
    }

    /// Runs `arguments[0]` (an absolute path) with the rest as its arguments.
    public static func run(_ arguments: [String]) async throws -> Result {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-spawn-\(UUID().uuidString).log").path
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                var actions = posix_spawn_file_actions_t()
                posix_spawn_file_actions_init(&actions)
                defer { posix_spawn_file_actions_destroy(&actions) }
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
                let argv = arguments.map { strdup($0) } + [nil]
                defer { argv.forEach { free($0) } }
                var pid = pid_t()
                let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
                guard spawned == 0 else {
                    continuation.resume(throwing: POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL))
                    return
                }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1, errno == EINTR {}
                let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                try? FileManager.default.removeItem(atPath: log)
                let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                continuation.resume(returning: Result(status: exit, output: output))
            }
            thread.start()
        }
    }
}
