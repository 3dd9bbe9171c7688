import PushgateCore
import Synchronization
import Testing

@Suite("Deadline scheduler")
struct DeadlineSchedulerTests {
    @Test func dueActionsRunInDeadlineOrderAndCancelledOnesNever() async throws {
        let scheduler = DeadlineScheduler()
        let ran = Mutex<[String]>([])
        let start = ContinuousClock.now
        scheduler.schedule(at: start + .milliseconds(400)) { ran.withLock { $0.append("late") } }
        // An earlier deadline scheduled after a later one still runs first.
        scheduler.schedule(at: start + .milliseconds(100)) { ran.withLock { $0.append("early") } }
        let cancelled = scheduler.schedule(at: start + .milliseconds(200)) { ran.withLock { $0.append("cancelled") } }
        scheduler.cancel(cancelled)
        #expect(scheduler.pending == 2)
        let deadline = ContinuousClock.now + .seconds(60)
        while ran.withLock({ $0.count }) < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(ran.withLock { $0 } == ["early", "late"])
        #expect(ContinuousClock.now - start >= .milliseconds(400))
        #expect(scheduler.pending == 0)
    }

    @Test func manyCancelledDeadlinesLeaveNothingBehind() async throws {
        let scheduler = DeadlineScheduler()
        let tokens = (0..<10_000).map { _ in scheduler.schedule(at: .now + .seconds(30)) { Issue.record("a cancelled action ran") } }
        #expect(scheduler.pending == 10_000)
        for token in tokens { scheduler.cancel(token) }
        #expect(scheduler.pending == 0)
    }
}
