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
    /// Told of each signal while registered: lanes waiting for a round (``OutboxRoundWait``).
    private let listeners = Mutex<(next: UInt64, all: [UInt64: @Sendable (Set<String>) -> Void])>((0, [:]))

    /// Creates a wake-up channel.
    public init() {}

    /// Wakes the worker if it waits; otherwise makes its next wait return at once.
    public func signal() {
        self.signal(apps: [])
    }

    /// Wakes the worker as ``signal()`` does, saying which apps the new work is for (lanes waiting for a
    /// round of other apps hear of it).
    func signal(apps: Set<String>) {
        self.lastSignal.store((ContinuousClock.now - self.origin).nanosecondsClamped, ordering: .relaxed)
        if !apps.isEmpty {
            for listener in self.listeners.withLock({ $0.all.isEmpty ? [] : Array($0.all.values) }) { listener(apps) }
        }
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

    /// Calls `listener` with the apps of every signal that names them, until `body` returns.
    func listening<T>(_ listener: @escaping @Sendable (Set<String>) -> Void, _ body: () async -> T) async -> T {
        let id = self.listeners.withLock { listeners in
            listeners.next += 1
            listeners.all[listeners.next] = listener
            return listeners.next
        }
        defer { _ = self.listeners.withLock { $0.all.removeValue(forKey: id) } }
        return await body()
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
