import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `pushgate reload`: asks a running gateway to read its configuration again (sends it SIGHUP).
struct ReloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Make a running gateway reload its configuration (SIGHUP to the process in --pid-file); exit 0 when the signal was sent.",
        discussion: "The gateway logs what the reload changed, or why the file was refused (then nothing changes)."
    )

    @Option(name: .customLong("pid-file"), help: ArgumentHelp("The file `pushgate serve --pid-file` wrote.", valueName: "file"))
    var pidFile: String

    func run() throws {
        let pid: pid_t
        do {
            pid = try PIDFile.read(self.pidFile)
        } catch {
            FileHandle.standardError.write(Data("pushgate: \(error)\n".utf8))
            throw ExitCode(1)
        }
        // A stale file (the gateway killed, its pid since reused) must not hang up another process.
        guard PIDFile.isGateway(pid) else {
            FileHandle.standardError.write(Data("pushgate: process \(pid) named by \(self.pidFile) is not a running `pushgate serve`\n".utf8))
            throw ExitCode(1)
        }
        guard kill(pid, SIGHUP) == 0 else {
            FileHandle.standardError.write(Data("pushgate: cannot signal process \(pid): \(String(cString: strerror(errno)))\n".utf8))
            throw ExitCode(1)
        }
        print("sent SIGHUP to process \(pid)")
    }
}
