import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file `pushgate serve --pid-file` writes its process id to, and `pushgate reload` reads.
struct PIDFile {
    /// Where it is.
    let path: String

    /// Writes this process's id.
    /// - Throws: ``PIDFileError`` when the file names another running gateway (a second `serve` must not
    ///   take the first one's file), or cannot be written.
    init(path: String) throws {
        self.path = path
        if let pid = try? Self.read(path), pid != getpid(), Self.isGateway(pid) {
            throw PIDFileError("the pid file \(path) names a running gateway (process \(pid))")
        }
        do {
            try Data("\(getpid())\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw PIDFileError("cannot write the pid file \(path): \(Self.reason(error))")
        }
    }

    /// Removes the file (at exit) if it still names this process.
    func remove() {
        guard (try? Self.read(self.path)) == getpid() else { return }
        try? FileManager.default.removeItem(atPath: self.path)
    }

    /// Whether process `pid` runs `pushgate serve` (its command line, from `/proc`); true for a process
    /// whose command line cannot be read, so only a process known to be something else is refused (an empty
    /// one, a kernel thread's or a zombie's, is known to be something else).
    static func isGateway(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        // Another user's process under `hidepid`, or no /proc at all: it exists, and that is all one can tell.
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return true }
        // An empty command line is a kernel thread's or a zombie's: not a gateway.
        guard !data.isEmpty else { return false }
        let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        // The program may follow an emulator or a wrapper (qemu-user, Rosetta): any argument naming pushgate
        // with `serve` after it.
        guard let program = arguments.firstIndex(where: { URL(fileURLWithPath: $0).lastPathComponent.contains("pushgate") }) else { return false }
        return arguments[(program + 1)...].contains("serve")
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? CocoaError, let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return (error as NSError).localizedDescription
    }

    /// The process id a file holds.
    /// - Throws: a message for the operator when it cannot be read or holds no process id.
    static func read(_ path: String) throws -> pid_t {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw PIDFileError("cannot read the pid file \(path)")
        }
        guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0 else {
            throw PIDFileError("the pid file \(path) holds no process id")
        }
        return pid
    }
}

/// Why a pid file could not be used.
struct PIDFileError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
