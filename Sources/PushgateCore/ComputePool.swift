/// Runs CPU-heavy steps (signature checks, payload encryption) on Swift's shared pool of threads,
/// whatever executor the calling task prefers.
///
/// The HTTP front ends answer each request on its connection's event loop, so that reading the request,
/// awaiting a provider and writing the answer cost no hand-over between threads. A step that takes tens of
/// microseconds or more would hold up every other connection of that loop; it runs here instead, and the
/// task returns to its loop afterwards. From a task that runs on the shared pool already, this costs no
/// hand-over.
public enum ComputePool {
    /// Runs `work` on the shared pool and returns its result.
    /// - Parameter work: the CPU-bound step; it must not block a thread (awaiting is fine: it resumes on
    ///   the pool).
    /// - Returns: what `work` returns.
    /// - Throws: what `work` throws.
    public static func run<Result, Failure: Error>(_ work: () async throws(Failure) -> Result) async throws(Failure) -> Result {
        try await withTaskExecutorPreference(globalConcurrentExecutor, operation: work)
    }
}
