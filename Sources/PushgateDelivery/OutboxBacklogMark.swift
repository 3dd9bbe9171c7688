import Synchronization

/// Whether the outbox worker's latest round was full: a backlog, which the helper lanes join in on. While
/// rounds come back short (an idle outbox, or an inflow the first lane keeps up with), the helpers wait
/// here without asking the store anything; the first lane's polls find a new backlog (retries come due,
/// another instance's leftovers) and its first full round wakes them.
final class OutboxBacklogMark: Sendable {
    private struct State {
        var full = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Records whether the round that just ended was full; a full one wakes the helpers waiting.
    func record(roundWasFull: Bool) {
        let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.full = roundWasFull
            guard roundWasFull else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the latest round to end was full.
    var seen: Bool {
        self.state.withLock { $0.full }
    }

    /// Returns when a full round is recorded (at once when the latest was), or when the task is
    /// cancelled (then every waiter returns; the others wait again).
    func waitForBacklog() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = self.state.withLock { state -> Bool in
                    // Under the lock: a cancellation either came before (seen here) or resumes this waiter.
                    if state.full || Task.isCancelled { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiters = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }
}
