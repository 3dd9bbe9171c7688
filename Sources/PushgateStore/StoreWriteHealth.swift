import Synchronization

/// What the last writes said about whether the database can write (a full disk, a read-only server),
/// and when the health check should find out by writing once itself.
public final class StoreWriteHealth: Sendable {
    /// The counter the health check's own write increments.
    public static let probeCounter = "pushgate:health:write-probe"
    /// How often a write is tried while writes fail.
    public static let failingProbeInterval: Duration = .seconds(1)

    private struct State {
        var failure: String?
        var lastOutcome: ContinuousClock.Instant?
        var lastOutcomeStarted: ContinuousClock.Instant?
        var lastProbe: ContinuousClock.Instant?
        var probing = false
    }

    private let probeInterval: Duration
    private let state = Mutex(State())

    /// Creates the record of a store that was just opened (and so could write): the first probe is due
    /// one probe interval later, unless a write says otherwise before.
    /// - Parameter probeInterval: how long a write outcome is trusted before a probe write is due.
    public init(probeInterval: Duration) {
        self.probeInterval = probeInterval
        self.state.withLock { $0.lastOutcome = .now }
    }

    /// Why the last write failed, nil when it succeeded (or none was made yet).
    public var failure: String? { self.state.withLock { $0.failure } }

    /// A write that started at `started` succeeded. An outcome of a write that started before the one
    /// last recorded is ignored: it says less about the database now.
    public func succeeded(started: ContinuousClock.Instant) {
        self.record(nil, started: started)
    }

    /// A write that started at `started` failed for `reason`.
    public func failed(_ reason: String, started: ContinuousClock.Instant) {
        self.record(reason, started: started)
    }

    private func record(_ failure: String?, started: ContinuousClock.Instant) {
        self.state.withLock { state in
            if let last = state.lastOutcomeStarted, started < last { return }
            state.failure = failure
            state.lastOutcome = .now
            state.lastOutcomeStarted = started
        }
    }

    /// Whether the caller should make a probe write now: no write outcome within the probe interval, or
    /// writes failing and no probe within the last second. At most one caller at a time is told yes; it
    /// calls ``probeEnded()`` after.
    func needsProbe(now: ContinuousClock.Instant = .now) -> Bool {
        self.state.withLock { state in
            guard !state.probing else { return false }
            let due: Bool
            if state.failure != nil {
                due = state.lastProbe.map { now - $0 >= Self.failingProbeInterval } ?? true
            } else {
                due = state.lastOutcome.map { now - $0 >= self.probeInterval } ?? true
            }
            if due {
                state.probing = true
                state.lastProbe = now
            }
            return due
        }
    }

    /// The probe write that ``needsProbe(now:)`` asked for has ended (its outcome was recorded).
    func probeEnded() {
        self.state.withLock { $0.probing = false }
    }
}
