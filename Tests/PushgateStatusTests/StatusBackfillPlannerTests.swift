@testable import PushgateStatus
import Testing

/// When the poll loop asks the store to catch up, and for which time range: the last hour at start-up,
/// from the previous poll on after a full cache or a gap, never further back than the limit.
@Suite("Status store backfill: windows")
struct StatusBackfillPlannerTests {
    typealias Window = StatusBackfillPlanner.Window
    static let second: Int64 = 1_000_000_000
    static let now: Int64 = 1_800_000_000 * second

    func planner(limit: Duration = .seconds(3_600)) -> StatusBackfillPlanner {
        StatusBackfillPlanner(limit: limit, cacheCapacity: 8, pollInterval: .milliseconds(100))
    }

    @Test func startUpAsksForTheLastHourAndALittleAhead() {
        var planner = self.planner()
        #expect(planner.startUp(now: Self.now) == Window(start: Self.now - 3_600 * Self.second, end: Self.now + 30 * Self.second))
    }

    @Test func pollsThatCannotHaveMissedAnythingAskForNothing() {
        var planner = self.planner()
        _ = planner.startUp(now: Self.now)
        #expect(planner.polled(startedAt: Self.now + Self.second, endedAt: Self.now + Self.second + 1_000, count: 7) == nil, "one short of the cache")
        #expect(planner.polled(startedAt: Self.now + 2 * Self.second, endedAt: Self.now + 2 * Self.second + 1_000, count: 0) == nil)
        #expect(planner.polled(startedAt: Self.now + 11 * Self.second, endedAt: Self.now + 11 * Self.second, count: 3) == nil, "9 s apart: under the gap")
    }

    @Test func aFullPollAsksFromThePreviousPollOn() throws {
        var planner = self.planner()
        _ = planner.startUp(now: Self.now)
        _ = planner.polled(startedAt: Self.now + Self.second, endedAt: Self.now + Self.second, count: 2)
        let full = planner.polled(startedAt: Self.now + 2 * Self.second, endedAt: Self.now + 3 * Self.second, count: 8)
        let (window, reason) = try #require(full)
        #expect(reason == .fullCache)
        #expect(window == Window(start: Self.now + Self.second - 30 * Self.second, end: Self.now + 3 * Self.second + 30 * Self.second))
        #expect(planner.polled(startedAt: Self.now + 4 * Self.second, endedAt: Self.now + 4 * Self.second, count: 1) == nil, "asked once")
    }

    @Test func failedPollsOrALongPauseAreAGap() throws {
        var planner = self.planner()
        _ = planner.startUp(now: Self.now)
        _ = planner.polled(startedAt: Self.now + Self.second, endedAt: Self.now + Self.second, count: 0)
        planner.pollFailed()
        planner.pollFailed()
        let afterGap = planner.polled(startedAt: Self.now + 3 * Self.second, endedAt: Self.now + 4 * Self.second, count: 0)
        let (afterFailures, reason) = try #require(afterGap)
        #expect(reason == .gap)
        #expect(afterFailures == Window(start: Self.now - 29 * Self.second, end: Self.now + 34 * Self.second))
        // A poll that began 20 s after the one before (a slow poll, a stalled process).
        let afterSlowPoll = planner.polled(startedAt: Self.now + 23 * Self.second, endedAt: Self.now + 23 * Self.second, count: 0)
        let (slow, slowReason) = try #require(afterSlowPoll)
        #expect(slowReason == .gap && slow.start == Self.now + 3 * Self.second - 30 * Self.second)
    }

    @Test func noWindowReachesBackFurtherThanTheLimit() throws {
        var planner = self.planner(limit: .seconds(60))
        #expect(planner.startUp(now: Self.now).start == Self.now - 60 * Self.second)
        planner.pollFailed()
        let later = Self.now + 7_200 * Self.second
        let missed = planner.polled(startedAt: later, endedAt: later + Self.second, count: 0)
        let (window, _) = try #require(missed)
        #expect(window == Window(start: later + Self.second - 60 * Self.second, end: later + 31 * Self.second))
    }

    @Test func windowsMergeAndAreCutAtTheirEarliestTime() {
        #expect(Window(start: 10, end: 20).merged(with: Window(start: 5, end: 15)) == Window(start: 5, end: 20))
        #expect(Window(start: 10, end: 20).merged(with: Window(start: 30, end: 40)) == Window(start: 10, end: 40))
        #expect(Window(start: 10, end: 20).clamped(notBefore: 15) == Window(start: 15, end: 20))
        #expect(Window(start: 10, end: 20).clamped(notBefore: 5) == Window(start: 10, end: 20))
        #expect(Window(start: 10, end: 20).clamped(notBefore: 21) == nil)
    }
}
