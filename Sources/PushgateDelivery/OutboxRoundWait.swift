import Synchronization

/// How long a lane waits for its round: until every part it waits for has finished, or until a
/// deadline. The deadline starts at the longest patience of the round's apps (``OutboxAppPace``) and
/// comes nearer once the first part finishes: the others may then take at most twice as long as it did,
/// or what their apps' rounds usually take, or 10 ms, whichever is longest. So a part whose
/// provider hangs beside a healthy one is let go within milliseconds, and a healthy slower app is not.
/// Parts still out at the deadline are detached and go on by themselves.
final class OutboxRoundWait: Sendable {
    private struct State {
        var pending: Int
        var deadline: ContinuousClock.Instant
        var firstFinished = false
        var waiter: CheckedContinuation<Void, Never>?
        var timer: Task<Void, Never>?
        /// The deadline ``timer`` wakes the waiter at.
        var armed: ContinuousClock.Instant?
    }

    private let started = ContinuousClock.now
    /// The longest usual round of the apps waited for.
    private let slack: Duration
    private let state: Mutex<State>
    private let parts = Mutex<[OutboxRoundPart]>([])

    /// - Parameters:
    ///   - parts: how many parts the lane waits for.
    ///   - patience: the longest patience among their apps.
    ///   - usual: the longest usual round among their apps.
    init(parts: Int, patience: Duration, usual: Duration) {
        self.slack = usual
        self.state = Mutex(State(pending: parts, deadline: ContinuousClock.now + patience))
    }

    /// Makes `part` one of those waited for (before it can finish).
    func add(_ part: OutboxRoundPart) {
        self.parts.withLock { $0.append(part) }
    }

    /// One of the parts waited for has finished.
    func partFinished() {
        let now = ContinuousClock.now
        let (waiter, rearm) = self.state.withLock { state -> (CheckedContinuation<Void, Never>?, ContinuousClock.Instant?) in
            state.pending -= 1
            if state.pending == 0 {
                defer { state.waiter = nil }
                return (state.waiter, nil)
            }
            guard !state.firstFinished else { return (nil, nil) }
            state.firstFinished = true
            let cut = now + max(.milliseconds(10), (now - self.started) * 2, self.slack)
            guard cut < state.deadline else { return (nil, nil) }
            state.deadline = cut
            return (nil, state.waiter == nil ? nil : cut)
        }
        waiter?.resume()
        if let rearm { self.arm(rearm) }
    }

    /// Waits until every part has finished or the deadline passes; parts still out then are detached.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let deadline = self.state.withLock { state -> ContinuousClock.Instant? in
                guard state.pending > 0 else { return nil }
                state.waiter = continuation
                return state.deadline
            }
            if let deadline { self.arm(deadline) } else { continuation.resume() }
        }
        self.state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
        }
        for part in self.parts.withLock({ $0 }) { part.detachIfOut() }
    }

    /// Wakes the waiter at `deadline` (unless everything finished by then, or a timer for an earlier
    /// deadline is set already).
    private func arm(_ deadline: ContinuousClock.Instant) {
        self.state.withLock { state in
            if let armed = state.armed, armed <= deadline { return }
            state.timer?.cancel()
            state.armed = deadline
            state.timer = Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                guard !Task.isCancelled else { return }
                let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                    // The deadline in force has passed (it can only have come nearer since).
                    guard state.deadline <= deadline else { return nil }
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
    }
}
