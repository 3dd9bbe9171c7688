import Synchronization

/// A counting semaphore for async code: at most `limit` holders at once, waiters resumed in order.
/// Waiting is not cancellable: callers bound their wait by their own deadline before acquiring.
final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(limit: Int) {
        precondition(limit > 0)
        self.state = Mutex(State(available: limit))
    }

    /// Waits for a free slot.
    func acquire() async {
        let acquired = self.state.withLock { state -> Bool in
            if state.available > 0 {
                state.available -= 1
                return true
            }
            return false
        }
        if acquired { return }
        await withCheckedContinuation { continuation in
            let resumeNow = self.state.withLock { state -> Bool in
                // A slot may have been released between the two locks.
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Frees a slot, handing it to the oldest waiter if there is one.
    func release() {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume()
    }

    /// Runs `body` holding a slot.
    func withPermit<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await self.acquire()
        defer { self.release() }
        return try await body()
    }
}
