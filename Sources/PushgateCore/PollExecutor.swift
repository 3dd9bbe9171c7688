/// A task executor a poll loop runs on (waiting on connections and timers, handing the work it finds to
/// other tasks), with timers of its own: sleeping on it wakes only its own thread, where `Task.sleep`'s
/// timer fires on another thread that then hands the task back.
public protocol PollExecutor: TaskExecutor {
    /// Suspends the calling task for `duration` on this executor's timer.
    /// - Parameter duration: how long.
    /// - Throws: `CancellationError` when the task is cancelled first.
    func sleep(for duration: Duration) async throws
}

extension Optional where Wrapped == any PollExecutor {
    /// Sleeps on the executor's timer, or with `Task.sleep` when there is no executor.
    /// - Parameter duration: how long.
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func sleep(for duration: Duration) async throws {
        if let executor = self {
            try await executor.sleep(for: duration)
        } else {
            try await Task.sleep(for: duration)
        }
    }
}
