import Foundation
import Synchronization

/// Runs CPU-heavy steps (signature checks, payload encryption, reading large bodies) on the gateway's
/// compute threads (a ``ComputeExecutor``), whatever executor the calling task prefers.
///
/// The HTTP front ends answer each request on its connection's event loop, so that reading the request,
/// awaiting a provider and writing the answer cost no hand-over between threads. A step that takes tens of
/// microseconds or more would hold up every other connection of that loop; it runs here instead, and the
/// task returns to its loop afterwards. From a task that runs on the compute threads already, this costs
/// no hand-over.
public enum ComputePool {
    private static let suggestedThreadCount = Atomic<Int>(0)

    /// How many compute threads to start: the composition root sets it before the first step runs (from
    /// `http.compute_threads`); afterwards a new value has no effect. Zero, the default, takes
    /// ``defaultThreadCount(cores:)``.
    public static var threadCountSuggestion: Int {
        get { Self.suggestedThreadCount.load(ordering: .relaxed) }
        set { Self.suggestedThreadCount.store(newValue, ordering: .relaxed) }
    }

    /// The compute threads, started when the first step runs.
    public static let executor: ComputeExecutor = {
        let suggested = Self.threadCountSuggestion
        return ComputeExecutor(threads: suggested > 0 ? suggested : Self.defaultThreadCount(cores: ProcessInfo.processInfo.activeProcessorCount))
    }()

    /// The compute threads for a machine of `cores` cores when nothing says otherwise (the configuration's
    /// default too, when the event loops take one per core): half the cores, at least two; one on a single
    /// core. On 2 cores a second compute thread carried more Web Push requests and Nextcloud notifications
    /// a second than one, in alternated runs (benchmarks/README.md, 2026-11-30, morning).
    public static func defaultThreadCount(cores: Int) -> Int {
        cores <= 1 ? 1 : max(2, cores / 2)
    }

    /// Runs `work` on the compute threads and returns its result.
    /// - Parameter work: the CPU-bound step; it must not block a thread.
    /// - Returns: what `work` returns.
    /// - Throws: what `work` throws.
    public static func run<Result, Failure: Error>(_ work: () throws(Failure) -> Result) async throws(Failure) -> Result {
        // The closure runs `work` itself, so it starts on the preferred executor. (Passing a synchronous
        // `work` on as the operation would run it where the caller is: only async functions switch to it.)
        try await withTaskExecutorPreference(Self.executor) { () async throws(Failure) -> Result in
            try work()
        }
    }

    /// Runs `work`, and what it awaits, on the compute threads and returns its result.
    /// - Parameter work: the steps; they must not block a thread.
    /// - Returns: what `work` returns.
    /// - Throws: what `work` throws.
    public static func run<Result, Failure: Error>(_ work: () async throws(Failure) -> Result) async throws(Failure) -> Result {
        try await withTaskExecutorPreference(Self.executor, operation: work)
    }

    /// Input (a request body) of at least this many bytes is read on the compute threads by
    /// ``run(readingBytes:_:)``: below it reading takes microseconds, a body of a MiB takes milliseconds.
    public static let largeInput = 64 * 1024

    /// Runs `work`, which reads `count` bytes of input, on the compute threads when that is at least
    /// ``largeInput``, else at once on the calling task's executor.
    /// - Parameters:
    ///   - count: the input's size in bytes.
    ///   - work: the reading step.
    /// - Returns: what `work` returns.
    /// - Throws: what `work` throws.
    public static func run<Result, Failure: Error>(readingBytes count: Int, _ work: () throws(Failure) -> Result) async throws(Failure) -> Result {
        guard count >= Self.largeInput else { return try work() }
        return try await Self.run(work)
    }
}
