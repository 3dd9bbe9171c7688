import CMallocTuning

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How many heaps (arenas) the C allocator keeps for the process's threads.
///
/// glibc's malloc gives a thread that finds every arena in use an arena of its own, up to eight per core.
/// Memory freed in one arena serves only that arena's later requests, so with the gateway's threads
/// (event loops, the compute pool, Swift's shared pool, SQLite's thread pool, the log writer) each
/// holding an arena, the free memory of all of them adds up: peak RSS under a 100-token gorush load was
/// 67–69 MiB with glibc's default and 61–65 MiB with one arena per core on a 2-core machine, at the same
/// throughput (benchmarks/README.md, 2026-11-29, day); with one arena for the two cores it was 1–2 MiB
/// lower again at the same offered load, with no more CPU per token (2026-11-29, evening). So one arena
/// for every two cores.
public enum MallocArenaLimit {
    /// The environment variable through which glibc itself takes the limit; when an operator sets it,
    /// their value stands.
    public static let environmentVariable = "MALLOC_ARENA_MAX"

    /// Caps the arenas at one for every two cores (at least one), unless the environment sets the limit
    /// already or jemalloc serves the process's allocations.
    /// Call it before the process starts its threads: arenas made before the call stay.
    /// - Parameters:
    ///   - cores: the machine's cores.
    ///   - allocator: the allocator serving the process (``ProcessAllocator/current``).
    /// - Returns: the limit set, or nil when it was left to the environment, jemalloc serves the
    ///   allocations, or the C library has no such setting.
    @discardableResult
    public static func apply(cores: Int, allocator: ProcessAllocator) -> Int? {
        // jemalloc (the Jemalloc trait's builds) has its own arenas: glibc's setting would reach nothing.
        if getenv(Self.environmentVariable) != nil || allocator.isJemalloc { return nil }
        let count = max(1, cores / 2)
        return pushgate_limit_malloc_arenas(Int32(count)) == 1 ? count : nil
    }
}
