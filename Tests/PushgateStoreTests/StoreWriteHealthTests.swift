@testable import PushgateStore
import Testing

/// What `/health` knows of the store's writes, and when it writes once itself.
@Suite struct StoreWriteHealthTests {
    @Test func theLatestStartedWriteDecides() {
        let health = StoreWriteHealth(probeInterval: .seconds(30))
        let early = ContinuousClock.now
        let late = early + .milliseconds(10)
        health.failed("disk full", started: late)
        // A write that started before the failing one but ended after it says nothing about now.
        health.succeeded(started: early)
        #expect(health.failure == "disk full")
        health.succeeded(started: late + .milliseconds(10))
        #expect(health.failure == nil)
    }

    @Test func aProbeIsDueWithoutARecentOutcomeAndOnlyOneAtATime() {
        let health = StoreWriteHealth(probeInterval: .seconds(30))
        let now = ContinuousClock.now
        #expect(!health.needsProbe(now: now), "a store just opened needs no probe")
        #expect(health.needsProbe(now: now + .seconds(31)))
        #expect(!health.needsProbe(now: now + .seconds(31)), "one probe at a time")
        health.probeEnded()
        health.succeeded(started: now)
        #expect(!health.needsProbe(now: .now + .seconds(1)), "a recent success needs no probe")
        #expect(health.needsProbe(now: .now + .seconds(31)))
        health.probeEnded()
    }

    @Test func whileWritesFailAProbeIsDueEverySecond() {
        let health = StoreWriteHealth(probeInterval: .seconds(30))
        let now = ContinuousClock.now
        health.failed("read-only", started: now)
        #expect(health.needsProbe(now: now))
        health.probeEnded()
        #expect(!health.needsProbe(now: now + .milliseconds(500)))
        #expect(health.needsProbe(now: now + .seconds(2)))
        health.probeEnded()
    }
}
