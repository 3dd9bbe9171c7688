import Testing

@testable import PushgateUnifiedPush

/// What the back end remembers of endpoints and hosts, and for how long.
@Suite("UnifiedPush endpoint memory")
struct UnifiedPushEndpointMemoryTests {
    @Test func goneIsRememberedForTenMinutesAndFailingForAMinuteOrTheServersPause() {
        let memory = UnifiedPushEndpointMemory()
        let now = ContinuousClock.now
        memory.rememberGone(.endpoint("https://a.example/up1"), now: now)
        memory.rememberUnavailable(.endpoint("https://a.example/up2"), pause: nil, now: now)
        memory.rememberUnavailable(.endpoint("https://a.example/up3"), pause: .seconds(7), now: now)
        let later = now + .seconds(30)
        #expect(memory.recall(endpoint: "https://a.example/up1", host: "https://a.example", now: later) == .gone)
        #expect(memory.recall(endpoint: "https://a.example/up2", host: "https://a.example", now: later) == .unavailable(remaining: .seconds(30)))
        #expect(memory.recall(endpoint: "https://a.example/up3", host: "https://a.example", now: later) == nil)
        #expect(memory.recall(endpoint: "https://a.example/up1", host: "https://a.example", now: now + .seconds(599)) == .gone)
        #expect(memory.recall(endpoint: "https://a.example/up1", host: "https://a.example", now: now + .seconds(601)) == nil)
    }

    @Test func aHostEntryCoversEveryEndpointOnIt() {
        let memory = UnifiedPushEndpointMemory()
        memory.rememberGone(.host("https://gone.example"))
        #expect(memory.recall(endpoint: "https://gone.example/up1", host: "https://gone.example") == .gone)
        #expect(memory.recall(endpoint: "https://other.example/up1", host: "https://other.example") == nil)
    }

    @Test func aFullTableDropsWhatExpiredThenEverything() {
        let memory = UnifiedPushEndpointMemory(capacity: 3)
        let now = ContinuousClock.now
        memory.rememberUnavailable(.endpoint("e1"), pause: .seconds(1), now: now)
        memory.rememberGone(.endpoint("e2"), now: now)
        memory.rememberGone(.endpoint("e3"), now: now)
        // e1 expired: it makes room.
        memory.rememberGone(.endpoint("e4"), now: now + .seconds(2))
        #expect(memory.count == 3)
        #expect(memory.recall(endpoint: "e2", host: "h", now: now + .seconds(2)) == .gone)
        // Nothing expired: the table starts again rather than grow.
        memory.rememberGone(.endpoint("e5"), now: now + .seconds(3))
        #expect(memory.count == 1)
        #expect(memory.recall(endpoint: "e5", host: "h", now: now + .seconds(3)) == .gone)
    }
}
