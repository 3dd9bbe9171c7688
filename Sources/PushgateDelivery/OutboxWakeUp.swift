import PushgateCore
import Synchronization

/// Lets an enqueue wake the outbox worker instead of waiting for its next poll, and carries what this
/// instance enqueues to its own worker (``OutboxHandOff``).
public final class OutboxWakeUp: Sendable {
    /// Entries handed from enqueues to the running worker.
    let handOff = OutboxHandOff()
    /// The worker's wait: its continuation while it waits, and whether a signal came while it did not.
    private let waiting = Mutex(WaitState())
    /// When ``signal()`` was last called: nanoseconds after `origin`, or `Int64.min` before the first call.
    private let lastSignal = Atomic<Int64>(.min)
    private let origin = ContinuousClock.now
    /// Told of each signal while registered: lanes waiting for a round (``OutboxRoundWait``).
    private let listeners = Mutex<(next: UInt64, all: [UInt64: @Sendable (Set<String>) -> Void])>((0, [:]))

    /// Creates a wake-up channel.
    public init() {}

    /// Wakes the worker if it waits; otherwise makes its next wait return at once.
    public func signal() {
        self.signal(apps: EmptyCollection())
    }

    /// Wakes the worker as ``signal()`` does, saying which apps the new work is for (lanes waiting for a
    /// round of other apps hear of it; the set of apps is built only while one listens).
    func signal(apps: some Sequence<String>) {
        self.lastSignal.store((ContinuousClock.now - self.origin).nanosecondsClamped, ordering: .relaxed)
        let listeners = self.listeners.withLock { $0.all.isEmpty ? [] : Array($0.all.values) }
        if !listeners.isEmpty {
            let named = Set(apps)
            if !named.isEmpty { for listener in listeners { listener(named) } }
        }
        self.endWait(pendingIfNotWaiting: true)
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

    /// Waits for a signal or `timeout`, whichever comes first (or for the task's cancellation). The
    /// timeout goes through the shared ``DeadlineScheduler``: a timer task a wait, cancelled by the signal
    /// that comes first, would hold its memory until its deadline (thousands of waits a second under load).
    func wait(timeout: Duration) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let generation = self.waiting.withLock { state -> UInt64? in
                    if state.pending {
                        state.pending = false
                        return nil
                    }
                    state.generation &+= 1
                    state.waiter = continuation
                    return state.generation
                }
                guard let generation else { return continuation.resume() }
                let timer = DeadlineScheduler.shared.schedule(at: .now + timeout) { self.endWait(generation: generation) }
                let armed = self.waiting.withLock { state -> Bool in
                    guard state.generation == generation, state.waiter != nil else { return false }
                    state.timer = timer
                    return true
                }
                if !armed { DeadlineScheduler.shared.cancel(timer) }
                if Task.isCancelled { self.endWait(pendingIfNotWaiting: false) }
            }
        } onCancel: {
            self.endWait(pendingIfNotWaiting: false)
        }
    }

    /// Ends the current wait, if any; otherwise, when `pendingIfNotWaiting`, makes the next wait return at once.
    private func endWait(pendingIfNotWaiting: Bool) {
        let (waiter, timer) = self.waiting.withLock { state -> (CheckedContinuation<Void, Never>?, DeadlineScheduler.Token?) in
            guard let waiter = state.waiter else {
                if pendingIfNotWaiting { state.pending = true }
                return (nil, nil)
            }
            defer { (state.waiter, state.timer) = (nil, nil) }
            return (waiter, state.timer)
        }
        if let timer { DeadlineScheduler.shared.cancel(timer) }
        waiter?.resume()
    }

    /// Ends the wait `generation` at its timeout, if it still waits.
    private func endWait(generation: UInt64) {
        let waiter = self.waiting.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation, let waiter = state.waiter else { return nil }
            defer { (state.waiter, state.timer) = (nil, nil) }
            return waiter
        }
        waiter?.resume()
    }
}

/// The worker's wait for a signal (``OutboxWakeUp/wait(timeout:)``).
private struct WaitState {
    /// The waiting worker, resumed by a signal, its timeout or its cancellation.
    var waiter: CheckedContinuation<Void, Never>?
    /// Whether a signal came while nobody waited: the next wait returns at once.
    var pending = false
    /// Counts waits, so a timeout that fires late does not end a later wait.
    var generation: UInt64 = 0
    /// The current wait's timeout in the shared scheduler.
    var timer: DeadlineScheduler.Token?
}
