public import PushgateStore
import Synchronization

/// The outbox backlog as ``OutboxBacklogSampler`` last read it, for readers that want the figures without
/// scanning the outbox again (the operator console): with a large backlog that scan is the costliest
/// statement the gateway runs, and once every sampling interval is enough.
public final class OutboxBacklogReading: Sendable {
    /// One reading: each app's backlog, and when it was read.
    public struct Reading: Sendable {
        /// Each app's backlog (apps with no entries are absent).
        public var backlogs: [OutboxAppBacklog]
        /// When the sampler read it.
        public var readAt: ContinuousClock.Instant
    }

    private let latest = Mutex<Reading?>(nil)

    /// No reading yet.
    public init() {}

    /// The last reading, if one was made no longer ago than `maximumAge`.
    public func current(maximumAge: Duration, now: ContinuousClock.Instant = .now) -> Reading? {
        guard let reading = self.latest.withLock({ $0 }), now - reading.readAt <= maximumAge else { return nil }
        return reading
    }

    /// Keeps a new reading.
    public func record(_ backlogs: [OutboxAppBacklog], at instant: ContinuousClock.Instant = .now) {
        self.latest.withLock { $0 = Reading(backlogs: backlogs, readAt: instant) }
    }
}
