import PushgateProviderSupport
import Testing

/// One origin takes at most three quarters of the slots; the others keep the rest, and idle origins are
/// not remembered without bound.
@Suite("Request slots per origin")
struct OriginRequestSlotsTests {
    @Test func oneOriginLeavesAQuarterOfTheSlotsToTheOthers() async throws {
        let slots = OriginRequestSlots(permits: 4)
        #expect(slots.permitsPerOrigin == 3)
        for _ in 0..<3 { #expect(await slots.enter("https://hung.example", until: .now + .seconds(5)) == .entered) }
        // The hung origin's fourth waits in its own line until its deadline ...
        #expect(await slots.enter("https://hung.example", until: .now + .milliseconds(200)) == .notInTime)
        // ... while another origin is served at once.
        let started = ContinuousClock.now
        #expect(await slots.enter("https://other.example", until: .now + .seconds(5)) == .entered)
        // At once takes microseconds; waiting behind the hung origin would last until this call's deadline
        // (5 s), as no slot is given back before then.
        #expect(ContinuousClock.now - started < .seconds(4))
        #expect(slots.originsInUse == 2)
        slots.leave("https://other.example")
        for _ in 0..<3 { slots.leave("https://hung.example") }
        #expect(slots.originsInUse == 0)
    }

    /// The shared slots still bound all origins together: with every one held, a new origin waits.
    @Test func allOriginsTogetherShareThePermits() async throws {
        let slots = OriginRequestSlots(permits: 4)
        for origin in ["a", "b", "c", "d"] { #expect(await slots.enter(origin, until: .now + .seconds(5)) == .entered) }
        #expect(await slots.enter("e", until: .now + .milliseconds(200)) == .notInTime)
        #expect(slots.originsInUse == 4)
        // A slot given back is taken by the next waiter.
        async let waiting = slots.enter("e", until: .now + .seconds(10))
        try await Task.sleep(for: .milliseconds(100))
        slots.leave("a")
        #expect(await waiting == .entered)
        for origin in ["b", "c", "d", "e"] { slots.leave(origin) }
        #expect(slots.originsInUse == 0)
    }

    /// Idle lines are kept for the next request while there are few, and dropped past that.
    @Test func idleLinesAreKeptWhileFew() async {
        let slots = OriginRequestSlots(permits: 8)
        for index in 0..<200 {
            #expect(await slots.enter("https://host-\(index).example", until: .now + .seconds(5)) == .entered)
            slots.leave("https://host-\(index).example")
        }
        #expect(slots.originsInUse == 0)
        #expect(slots.linesKept <= OriginRequestSlots.idleLinesKept + 1)
        #expect(slots.linesKept >= OriginRequestSlots.idleLinesKept)
    }

    /// A single permit goes to whichever origin asks.
    @Test func oneSlotIsAllOneOrigins() async {
        let slots = OriginRequestSlots(permits: 1)
        #expect(slots.permitsPerOrigin == 1)
        #expect(await slots.enter("a", until: .now + .seconds(1)) == .entered)
        slots.leave("a")
    }

    /// An origin has at most `requestsPerOrigin` requests running or waiting: more are turned away at once,
    /// so a hung origin cannot gather every delivery in flight; other origins are served meanwhile.
    @Test func aFullLineTurnsRequestsAwayAtOnce() async throws {
        let slots = OriginRequestSlots(permits: 4, requestsPerOrigin: 5)
        #expect(slots.permitsPerOrigin == 3)
        for _ in 0..<3 { #expect(await slots.enter("https://hung.example", until: .now + .seconds(5)) == .entered) }
        // Two wait (each until it is cancelled: nothing is given back) ...
        let waiters = (0..<2).map { _ in Task { await slots.enter("https://hung.example", until: .now + .seconds(60)) } }
        #expect(try await Self.eventually { slots.requests(to: "https://hung.example") == 5 })
        // ... a third is turned away without waiting for its deadline (a minute) ...
        let started = ContinuousClock.now
        #expect(await slots.enter("https://hung.example", until: .now + .seconds(60)) == .lineFull)
        #expect(ContinuousClock.now - started < .seconds(30))
        // ... and another origin is served.
        #expect(await slots.enter("https://other.example", until: .now + .seconds(5)) == .entered)
        slots.leave("https://other.example")
        // A slot given back goes to a waiter, and the line has room again.
        slots.leave("https://hung.example")
        for waiter in waiters { waiter.cancel() }
        var entered = 0
        for waiter in waiters where await waiter.value == .entered { entered += 1 }
        #expect(entered <= 1)
        for _ in 0..<(2 + entered) { slots.leave("https://hung.example") }
        #expect(slots.originsInUse == 0)
        #expect(await slots.enter("https://hung.example", until: .now + .seconds(5)) == .entered)
        slots.leave("https://hung.example")
    }

    /// A back end's slots: an origin has at most half its in-flight limit running or waiting, or its share
    /// of the permits up to three quarters of the limit (twice its share without a limit).
    @Test func oneOriginHasHalfTheInFlightLimit() async {
        #expect(OriginRequestSlots(permits: 64, inFlightLimit: 512).requestsPerOrigin == 256)
        #expect(OriginRequestSlots(permits: 4).requestsPerOrigin == 6)
        #expect(OriginRequestSlots(permits: 20, inFlightLimit: 20).requestsPerOrigin == 15)
        let small = OriginRequestSlots(permits: 64, inFlightLimit: 40)
        #expect(small.requestsPerOrigin == 30)
        for _ in 0..<30 { #expect(await small.enter("https://hung.example", until: .now + .seconds(5)) == .entered) }
        #expect(await small.enter("https://hung.example", until: .now + .seconds(5)) == .lineFull)
        for _ in 0..<30 { small.leave("https://hung.example") }
        let one = OriginRequestSlots(permits: 1, inFlightLimit: 1)
        #expect(one.requestsPerOrigin == 1)
        #expect(await one.enter("a", until: .now + .seconds(5)) == .entered)
        one.leave("a")
    }

    /// Polls `condition` every 20 ms for up to 10 s.
    private static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}
