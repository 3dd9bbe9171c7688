/// Decides when the poll loop may have missed messages and which time range the node's store should be
/// asked for: at start-up (the last `limit`), after a poll that came back as full as the node's cache (it
/// may have evicted messages unread), and after a gap in polling (failed polls, or a poll that started
/// long after the one before: the node may have been down, or its cache overflowed meanwhile).
///
/// A missed message was sent after the previous successful poll began (what came before, that poll
/// took), so a range starts there, less `margin` for senders' clocks (message timestamps are the
/// sender's; nwaku refuses those more than 20 s off), and ends `margin` after the poll that noticed. No
/// range reaches back further than `limit`. Times are nanoseconds since 1970, as message timestamps are.
struct StatusBackfillPlanner: Sendable {
    /// A time range of message timestamps, both ends included.
    struct Window: Sendable, Equatable {
        var start: Int64
        var end: Int64

        /// The smallest window covering both.
        func merged(with other: Window) -> Window {
            Window(start: min(self.start, other.start), end: max(self.end, other.end))
        }

        /// The window without what lies before `earliest`; nil when nothing is left.
        func clamped(notBefore earliest: Int64) -> Window? {
            let start = max(self.start, earliest)
            return start <= self.end ? Window(start: start, end: self.end) : nil
        }
    }

    /// Why a window is asked for (a metric dimension).
    enum Reason: String, Sendable {
        case startUp = "start_up"
        case fullCache = "full_cache"
        case gap
    }

    /// How far back a window may reach.
    let limit: Int64
    /// How many messages the node's cache holds: a poll returning as many may have lost some.
    let cacheCapacity: Int
    /// A poll starting longer than this after the previous one began is a gap.
    let gapThreshold: Int64
    /// Room for senders' clocks at both ends of a window.
    let margin: Int64
    /// When the last successful poll began; nil before the first.
    private(set) var lastPollStart: Int64?
    /// Whether a poll failed since the last successful one.
    private(set) var failedSinceLastPoll = false

    static let nanosecondsPerSecond: Int64 = 1_000_000_000

    /// - Parameters:
    ///   - limit: how far back a window may reach.
    ///   - cacheCapacity: the node's relay cache capacity.
    ///   - pollInterval: the longest pause between polls; a gap is 10 s more than it.
    ///   - margin: room for senders' clocks (30 s: nwaku's relay accepts timestamps 20 s off).
    init(limit: Duration, cacheCapacity: Int, pollInterval: Duration, margin: Duration = .seconds(30)) {
        self.limit = Self.nanoseconds(limit)
        self.cacheCapacity = max(1, cacheCapacity)
        self.gapThreshold = Self.nanoseconds(pollInterval + .seconds(10))
        self.margin = Self.nanoseconds(margin)
    }

    /// The window to catch up at start-up (just subscribed at `now`): the last `limit`.
    mutating func startUp(now: Int64) -> Window {
        self.lastPollStart = now
        self.failedSinceLastPoll = false
        return Window(start: now - self.limit, end: now + self.margin)
    }

    /// Notes a failed poll: the next successful one asks the store for what the node may have missed.
    mutating func pollFailed() {
        self.failedSinceLastPoll = true
    }

    /// Notes a successful poll that began at `startedAt`, ended at `endedAt` and returned `count` messages.
    /// - Returns: the window to ask the store for and why, or nil when the poll cannot have missed anything.
    mutating func polled(startedAt: Int64, endedAt: Int64, count: Int) -> (Window, Reason)? {
        let previous = self.lastPollStart ?? startedAt
        let failed = self.failedSinceLastPoll
        self.lastPollStart = startedAt
        self.failedSinceLastPoll = false
        let reason: Reason
        if count >= self.cacheCapacity {
            reason = .fullCache
        } else if failed || startedAt - previous > self.gapThreshold {
            reason = .gap
        } else {
            return nil
        }
        let window = Window(start: max(previous - self.margin, endedAt - self.limit), end: endedAt + self.margin)
        return (window, reason)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * Self.nanosecondsPerSecond + attoseconds / 1_000_000_000
    }
}
