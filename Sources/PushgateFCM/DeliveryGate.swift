/// A small async semaphore: at most `permits` deliveries run at once, and at most `limit` wait or run.
actor DeliveryGate {
    private let permits: Int
    private let limit: Int
    private var running = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(permits: Int, limit: Int) {
        self.permits = max(1, permits)
        self.limit = max(self.permits, limit)
    }

    /// Waits for a permit; false at once when `limit` deliveries already wait or run.
    func enter() async -> Bool {
        if self.running + self.waiters.count >= self.limit { return false }
        if self.running < self.permits {
            self.running += 1
            return true
        }
        await withCheckedContinuation { continuation in self.waiters.append(continuation) }
        return true
    }

    /// Returns a permit, handing it to the oldest waiter if there is one.
    func leave() {
        if self.waiters.isEmpty {
            self.running -= 1
        } else {
            self.waiters.removeFirst().resume()
        }
    }
}
