#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Starts the gateway's threads of its own (the compute threads, the log's writer), each under a name
/// that `top -H`, `perf` and `/proc` show.
///
/// Foundation's `Thread.name` names the system's thread only when the thread object already knows its own
/// identifier, which a new thread can ask for before `start()` has recorded it; the thread then keeps the
/// name of the thread that made it (an event loop's, a pool thread's). The Glibc module does not export
/// `pthread_setname_np`, so on Linux the new thread writes its name where the kernel keeps it.
public enum NamedThread {
    /// Starts a thread named `name` (its first 15 bytes on Linux) that runs `body`.
    /// - Parameters:
    ///   - name: the thread's name.
    ///   - body: what the thread runs; the thread ends when it returns.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            Self.nameCurrentThread(name)
            body()
        }
        thread.start()
    }

    /// Gives the calling thread the name `name`.
    private static func nameCurrentThread(_ name: String) {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        #elseif canImport(Darwin)
        _ = pthread_setname_np(name)
        #endif
    }
}
