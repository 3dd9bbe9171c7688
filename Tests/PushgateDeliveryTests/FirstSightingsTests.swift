@testable import PushgateDelivery
import Testing

/// A spell of sightings lasts while the key is seen again within the gap: its first sighting is reported
/// once, and its age grows; after a longer gap a new spell begins (and is reported again).
@Suite("first sightings")
struct FirstSightingsTests {
    @Test func aSpellEndsAfterTheGapAndANewOneIsReported() {
        let sightings = FirstSightings(gap: .seconds(10))
        let start = ContinuousClock.now
        #expect(sightings.sight("app", now: start) == (true, .zero))
        #expect(sightings.sight("app", now: start + .seconds(8)) == (false, .seconds(8)))
        #expect(sightings.sight("app", now: start + .seconds(16)) == (false, .seconds(16)))
        #expect(sightings.sight("other", now: start + .seconds(16)).isFirst)
        // Unseen for longer than the gap: a new spell.
        #expect(sightings.sight("app", now: start + .seconds(27)) == (true, .zero))
        // A new epoch (a reload) begins a new spell at once.
        #expect(sightings.sight("app", now: start + .seconds(30)) == (false, .seconds(3)))
        #expect(sightings.sight("app", epoch: 1, now: start + .seconds(31)) == (true, .zero))
    }
}
