import Synchronization

/// A counting semaphore for tasks: `acquire` waits (first come, first served) for a permit and gives up when
/// the task is cancelled.
final class AsyncSemaphore: Sendable {
    private struct State {
        var permits: Int
        var nextID = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let state: Mutex<State>

    init(permits: Int) {
        precondition(permits > 0, "a semaphore needs at least one permit")
        self.state = Mutex(State(permits: permits))
    }

    /// Takes a permit, waiting for one if needed.
    /// - Throws: `CancellationError` when the task is cancelled before it got one.
    func acquire() async throws {
        let id: Int? = self.state.withLock { state in
            if state.permits > 0 {
                state.permits -= 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = self.state.withLock { state -> Bool in
                    // Checked under the lock: a cancellation handler that ran earlier found no waiter.
                    if Task.isCancelled { return true }
                    state.waiters.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter = self.state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Returns a permit, handing it to the longest waiter if any.
    func release() {
        let waiter = self.state.withLock { state -> (id: Int, continuation: CheckedContinuation<Void, any Error>)? in
            if state.waiters.isEmpty {
                state.permits += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.continuation.resume()
    }
}
