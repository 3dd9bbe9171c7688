import Synchronization

/// Runs async operations one at a time, in arrival order.
///
/// SQLite has one writer; running the store's writes through this keeps a multi-statement transaction
/// from interleaving with another task's statements on the shared connection.
final class WriteSerializer: Sendable {
    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Runs `operation` once every earlier operation has finished; one whose task was cancelled while it
    /// waited (a bounded store call past its deadline, whose caller was told nothing was written) is not
    /// run. (One already running when its deadline passes still commits.)
    func run<T: Sendable>(_ operation: () async throws -> T) async throws -> T {
        await self.acquire()
        defer { self.release() }
        try Task.checkCancellation()
        return try await operation()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = self.state.withLock { state in
                if state.busy {
                    state.waiters.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func release() {
        let next = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
