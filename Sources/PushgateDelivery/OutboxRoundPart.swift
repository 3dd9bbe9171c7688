import Synchronization

/// One app's part of an outbox round, delivered and settled by a task of its own: the lane that started
/// it may wait for it (``OutboxRoundWait``) and otherwise lets it go on detached (``OutboxAppPace``).
final class OutboxRoundPart: Sendable {
    private struct State {
        var done = false
        var detached = false
    }

    let appID: String
    private let started = ContinuousClock.now
    private let pace: OutboxAppPace
    /// The lane's wait, when the lane waits for this part. Weak, because the wait holds its parts (to
    /// detach those still out when it ends): a strong reference both ways kept every waited round, its
    /// parts and its set of apps alive for good, some 300 bytes a round (`benchmarks/soak.sh`). A part
    /// that finishes after its lane has gone on has no wait left to tell.
    private weak let round: OutboxRoundWait?
    private let state = Mutex(State())

    init(appID: String, pace: OutboxAppPace, round: OutboxRoundWait?) {
        self.appID = appID
        self.pace = pace
        self.round = round
    }

    /// The part has finished: the lane's wait and the app's pace learn of it.
    func finish() {
        let detached = self.state.withLock { state in
            state.done = true
            return state.detached
        }
        self.pace.finished(self.appID, after: ContinuousClock.now - self.started, wasDetached: detached)
        self.round?.partFinished()
    }

    /// Detaches the part unless it has finished: the app's pace counts it until it does.
    func detachIfOut() {
        self.state.withLock { state in
            guard !state.done, !state.detached else { return }
            state.detached = true
            // Under the part's lock, so the count rises before ``finish()`` can lower it.
            self.pace.detached(self.appID)
        }
    }
}
