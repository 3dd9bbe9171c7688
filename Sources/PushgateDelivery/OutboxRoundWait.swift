import PushgateCore
import Synchronization

/// How long a lane waits for its round: until every part it waits for has finished, or until a
/// deadline. The deadline starts at the longest patience of the round's apps (``OutboxAppPace``) and
/// comes nearer once the first part finishes: the others may then take at most twice as long as it did,
/// or what their apps' rounds usually take, or 10 ms, whichever is longest; and when new work arrives for
/// an app the round does not wait for (an enqueue's signal), the round may take no longer than twice
/// what its apps' rounds usually take, or 10 ms. So a part whose provider hangs is let go within
/// milliseconds of another app's work to do, while a healthy slower app, a drain, or a steady inflow of
/// the same app's work keeps its lane waiting as before. Parts still out at the deadline are
/// detached and go on by themselves.
final class OutboxRoundWait: Sendable {
    private struct State {
        var pending: Int
        var deadline: ContinuousClock.Instant
        var firstFinished = false
        var waiter: CheckedContinuation<Void, Never>?
        /// The deadline the scheduler wakes the waiter at, and its token.
        var armed: (deadline: ContinuousClock.Instant, token: DeadlineScheduler.Token)?
        /// The parts waited for.
        var parts: [OutboxRoundPart] = []
        /// Their apps.
        var apps: Set<String> = []
    }

    private let started = ContinuousClock.now
    /// The longest usual round of the apps waited for.
    private let slack: Duration
    private let state: Mutex<State>

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
        self.state.withLock { state in
            state.parts.append(part)
            state.apps.insert(part.appID)
        }
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

    /// New work has arrived for `apps`: if any is not an app the round waits for, the round may take no
    /// longer than twice its apps' usual round (or 10 ms).
    func newWorkArrived(for apps: Set<String>) {
        let cut = self.started + max(.milliseconds(10), self.slack * 2)
        let rearm = self.state.withLock { state -> Bool in
            guard state.pending > 0, cut < state.deadline, !apps.isSubset(of: state.apps) else { return false }
            state.deadline = cut
            return state.waiter != nil
        }
        if rearm { self.arm(cut) }
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
        let (armed, parts) = self.state.withLock { state in
            defer { state.armed = nil }
            return (state.armed, state.parts)
        }
        if let armed { DeadlineScheduler.shared.cancel(armed.token) }
        for part in parts { part.detachIfOut() }
    }

    /// Wakes the waiter at `deadline` (unless everything finished by then, or an earlier deadline is set
    /// already), through the shared scheduler: a timer task a round would hold its memory until the
    /// deadline even when cancelled at once.
    private func arm(_ deadline: ContinuousClock.Instant) {
        let replaced = self.state.withLock { state -> DeadlineScheduler.Token?? in
            if let armed = state.armed, armed.deadline <= deadline { return .none }
            let previous = state.armed?.token
            let token = DeadlineScheduler.shared.schedule(at: deadline) { self.expire(deadline) }
            state.armed = (deadline, token)
            return .some(previous)
        }
        if case .some(let previous?) = replaced { DeadlineScheduler.shared.cancel(previous) }
    }

    /// A deadline set by ``arm(_:)`` came: the waiter goes on if the deadline in force has passed (it can
    /// only have come nearer since).
    private func expire(_ deadline: ContinuousClock.Instant) {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.deadline <= deadline else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
