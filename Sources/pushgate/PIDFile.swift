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
    init(path: String) throws {
        self.path = path
        try Data("\(getpid())\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Removes the file (at exit).
    func remove() {
        try? FileManager.default.removeItem(atPath: self.path)
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
