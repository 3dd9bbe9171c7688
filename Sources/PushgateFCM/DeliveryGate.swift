/// A small async semaphore: at most `permits` deliveries run at once, and at most `limit` wait or run.
/// A waiter gives up at its deadline.
actor DeliveryGate {
    /// The answer to ``enter(deadline:)``.
    enum Admission: Equatable {
        /// A permit was taken; call ``leave()`` when done.
        case admitted
        /// `limit` deliveries already wait or run.
        case full
        /// The deadline passed while waiting.
        case timedOut
    }

    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Admission, Never>
        var timer: Task<Void, Never>?
    }

    private let permits: Int
    private let limit: Int
    private var running = 0
    private var waiters: [Waiter] = []
    private var nextID = 0

    init(permits: Int, limit: Int) {
        self.permits = max(1, permits)
        self.limit = max(self.permits, limit)
    }

    /// Takes a permit, waiting for one until `deadline`.
    func enter(deadline: ContinuousClock.Instant) async -> Admission {
        if self.running + self.waiters.count >= self.limit { return .full }
        if self.running < self.permits {
            self.running += 1
            return .admitted
        }
        self.nextID += 1
        let id = self.nextID
        return await withCheckedContinuation { continuation in
            let timer = Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                self.expire(id)
            }
            self.waiters.append(Waiter(id: id, continuation: continuation, timer: timer))
        }
    }

    /// Returns a permit, handing it to the oldest waiter if there is one.
    func leave() {
        if self.waiters.isEmpty {
            self.running -= 1
        } else {
            let waiter = self.waiters.removeFirst()
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: .admitted)
        }
    }

    private func expire(_ id: Int) {
        guard let index = self.waiters.firstIndex(where: { $0.id == id }) else { return }
        self.waiters.remove(at: index).continuation.resume(returning: .timedOut)
    }
}
