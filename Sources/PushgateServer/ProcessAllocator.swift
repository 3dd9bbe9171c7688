import CMallocTuning

/// Which C allocator serves the process's memory: jemalloc when the binary was built with the package's
/// `Jemalloc` trait (or jemalloc was preloaded), otherwise the C library's own malloc.
///
/// Release builds link jemalloc (README, "Release build"): with the gateway's threads handing buffers to
/// each other (event loops, compute threads, the outbox), it spends less CPU a request than glibc's malloc
/// (benchmarks/README.md, 2026-12-01, morning).
public struct ProcessAllocator: Sendable, Equatable {
    /// The allocator's name and version, as the start-up log shows it: `jemalloc 5.3.0-…` or `libc malloc`.
    public let name: String
    /// jemalloc's arenas; nil for the C library's malloc, whose limit ``MallocArenaLimit`` sets.
    public let jemallocArenas: Int?

    /// Whether jemalloc serves the process's allocations.
    public var isJemalloc: Bool { self.jemallocArenas != nil }

    /// The allocator of this process; each call checks it again with one allocation, so read it once.
    public static var current: ProcessAllocator {
        var buffer = [CChar](repeating: 0, count: 128)
        guard pushgate_jemalloc_serves_malloc() == 1, pushgate_jemalloc_version(&buffer, buffer.count) == 1 else {
            return ProcessAllocator(name: "libc malloc", jemallocArenas: nil)
        }
        let version = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ProcessAllocator(name: "jemalloc \(version)", jemallocArenas: Int(max(0, pushgate_jemalloc_arenas())))
    }
}
