import Synchronization

/// A counting semaphore for async code: at most `limit` holders at once, waiters served in order, and
/// a wait that gives up at a deadline.
final class AsyncSemaphore: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var available: Int
        var nextID: UInt64 = 0
        var waiters: [Waiter] = []
    }

    private let state: Mutex<State>

    init(limit: Int) {
        precondition(limit > 0)
        self.state = Mutex(State(available: limit))
    }

    /// Waits for a free slot until `deadline`.
    /// - Returns: true with a slot (to be released), false when the deadline passed first.
    func acquire(until deadline: ContinuousClock.Instant) async -> Bool {
        let id: UInt64? = self.state.withLock { state in
            if state.available > 0 {
                state.available -= 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        return await withCheckedContinuation { continuation in
            let immediate: Bool? = self.state.withLock { state in
                // A slot may have been freed between the two locks.
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                if ContinuousClock.now >= deadline { return false }
                state.waiters.append(Waiter(id: id, continuation: continuation))
                return nil
            }
            if let immediate {
                continuation.resume(returning: immediate)
                return
            }
            Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                let expired = self.state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                expired?.continuation.resume(returning: false)
            }
        }
    }

    /// Frees a slot, handing it to the oldest waiter if there is one.
    func release() {
        let waiter = self.state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.continuation.resume(returning: true)
    }

    /// Runs `body` holding a slot, or returns nil when none was free before `deadline`.
    func withPermit<T: Sendable>(until deadline: ContinuousClock.Instant, _ body: () async throws -> T) async rethrows -> T? {
        guard await self.acquire(until: deadline) else { return nil }
        defer { self.release() }
        return try await body()
    }
}
