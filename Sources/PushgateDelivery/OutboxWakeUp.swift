import PushgateCore
import Synchronization

/// Lets an enqueue wake the outbox worker instead of waiting for its next poll, and carries what this
/// instance enqueues to its own worker (``OutboxHandOff``).
public final class OutboxWakeUp: Sendable {
    /// Entries handed from enqueues to the running worker.
    let handOff = OutboxHandOff()
    private let waiter = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let pending = Mutex(false)
    /// When ``signal()`` was last called: nanoseconds after `origin`, or `Int64.min` before the first call.
    private let lastSignal = Atomic<Int64>(.min)
    private let origin = ContinuousClock.now

    /// Creates a wake-up channel.
    public init() {}

    /// Wakes the worker if it waits; otherwise makes its next wait return at once.
    public func signal() {
        self.lastSignal.store((ContinuousClock.now - self.origin).nanosecondsClamped, ordering: .relaxed)
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

    /// Whether ``signal()`` was called less than `period` ago: front ends are enqueueing.
    func signalled(within period: Duration) -> Bool {
        let last = self.lastSignal.load(ordering: .relaxed)
        guard last != .min else { return false }
        return (ContinuousClock.now - self.origin).nanosecondsClamped - last < period.nanosecondsClamped
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
