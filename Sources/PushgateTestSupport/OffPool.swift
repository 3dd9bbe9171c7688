import Foundation

/// Runs CPU-bound work (key generation, long randomised loops) on a thread of its own and awaits its result.
///
/// Swift's global executor never preempts a job, and on Linux its pool has about one thread per CPU the
/// process may use (libdispatch adds one only when a worker blocks, not while it computes). Seconds of
/// computing on the pool therefore stall every in-process server, timer and deadline of the tests that run
/// alongside. A thread of its own is time-sliced by the kernel like any other, so the pool stays free.
///
/// The work should not record test issues itself (a thread of its own is outside the test's task): return
/// what it computed and check it in the test.
///
/// ```swift
/// let keys = try await OffPool.run { try (0..<6).map { _ in try NextcloudDeviceKey() } }
/// ```
public enum OffPool {
    /// Runs `work` on a new thread and returns what it returns, or throws what it throws.
    public static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.start()
        }
    }
}
