import Synchronization

/// Lets an enqueue wake the outbox worker instead of waiting for its next poll, and carries what this
/// instance enqueues to its own worker (``OutboxHandOff``).
public final class OutboxWakeUp: Sendable {
    /// Entries handed from enqueues to the running worker.
    let handOff = OutboxHandOff()
    private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let pending = Mutex(false)

    /// Creates a wake-up channel.
    public init() {}

    /// Wakes the worker if it waits; otherwise makes its next wait return at once.
    public func signal() {
        let continuation = self.waiter.withLock { waiter in
            defer { waiter = nil }
            return waiter
        }
        if let continuation {
            continuation.resume()
        } else {
            self.pending.withLock { $0 = true }
        }
    }

    /// Waits for a signal or `timeout`, whichever comes first.
    func wait(timeout: Duration) async {
        if self.pending.withLock({ pending in defer { pending = false }; return pending }) { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    self.waiter.withLock { $0 = continuation }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.signal()
            }
            await group.next()
            group.cancelAll()
        }
    }
}
