import PushgateProviderSupport
import Testing

/// The circuits of ``OriginCircuits``, on a clock the tests set.
@Suite("Origin circuits")
struct OriginCircuitsTests {
    static let start = ContinuousClock.now

    @Test func failuresInARowOpenOneOriginsCircuitAndAProbeClosesIt() {
        let circuits = OriginCircuits()
        let t0 = Self.start
        for _ in 0..<4 {
            #expect(circuits.admit("https://a.example", now: t0) == .admitted(probe: false))
            #expect(circuits.record("https://a.example", .failed, probe: false, now: t0) == .none)
        }
        // An answer in between starts the count again.
        #expect(circuits.record("https://a.example", .answered, probe: false, now: t0) == .none)
        for _ in 0..<4 { circuits.record("https://a.example", .failed, probe: false, now: t0) }
        #expect(circuits.record("https://a.example", .failed, probe: false, now: t0) == .opened(for: .seconds(1), failures: 5))
        #expect(circuits.admit("https://a.example", now: t0 + .milliseconds(400)) == .open(remaining: .milliseconds(600)))
        #expect(circuits.admit("https://b.example", now: t0) == .admitted(probe: false))
        // After the interval one probe goes; the others wait for it.
        #expect(circuits.admit("https://a.example", now: t0 + .seconds(1)) == .admitted(probe: true))
        #expect(circuits.admit("https://a.example", now: t0 + .seconds(1)) == .open(remaining: .zero))
        // A failed probe opens it for twice as long, up to the maximum.
        #expect(circuits.record("https://a.example", .failed, probe: true, now: t0 + .seconds(1)) == .opened(for: .seconds(2), failures: 6))
        var now = t0 + .seconds(3)
        var expected: Duration = .seconds(2)
        for failures in 7...14 {
            #expect(circuits.admit("https://a.example", now: now) == .admitted(probe: true))
            expected = min(expected * 2, .seconds(60))
            #expect(circuits.record("https://a.example", .failed, probe: true, now: now) == .opened(for: expected, failures: failures))
            now += expected
        }
        #expect(expected == .seconds(60))
        #expect(circuits.admit("https://a.example", now: now - .seconds(1)) == .open(remaining: .seconds(1)))
        // A probe that was not sent lets the next delivery probe; one answered closes the circuit.
        #expect(circuits.admit("https://a.example", now: now) == .admitted(probe: true))
        #expect(circuits.record("https://a.example", .notSent, probe: true, now: now) == .none)
        #expect(circuits.admit("https://a.example", now: now) == .admitted(probe: true))
        #expect(circuits.record("https://a.example", .answered, probe: true, now: now) == .closed)
        #expect(circuits.admit("https://a.example", now: now) == .admitted(probe: false))
        #expect(circuits.count == 0)
    }

    /// An open circuit counts as failing while deliveries still come to probe it; one nobody probed for
    /// the longest interval after its own ended (a server whose users moved) drops out of the count.
    @Test func anOpenCircuitNobodyProbesDropsOutOfTheCount() {
        let circuits = OriginCircuits()
        let t0 = Self.start
        for _ in 0..<5 { circuits.record("https://gone.example", .failed, probe: false, now: t0) }
        #expect(circuits.openCount(now: t0) == 1)
        #expect(circuits.openCount(now: t0 + .seconds(60)) == 1)
        #expect(circuits.openCount(now: t0 + .seconds(62)) == 0)
        // A probe out keeps it counted until its answer.
        #expect(circuits.admit("https://gone.example", now: t0 + .seconds(62)) == .admitted(probe: true))
        #expect(circuits.openCount(now: t0 + .seconds(62)) == 1)
        #expect(circuits.record("https://gone.example", .answered, probe: true, now: t0 + .seconds(63)) == .closed)
        #expect(circuits.openCount(now: t0 + .seconds(63)) == 0)
    }

    @Test func aFullTableDropsClosedCircuitsFirst() {
        var settings = OriginCircuits.Settings()
        settings.capacity = 3
        settings.failures = 2
        let circuits = OriginCircuits(settings: settings)
        let t0 = Self.start
        circuits.record("https://open.example", .failed, probe: false, now: t0)
        #expect(circuits.record("https://open.example", .failed, probe: false, now: t0) == .opened(for: .seconds(1), failures: 2))
        circuits.record("https://a.example", .failed, probe: false, now: t0)
        circuits.record("https://b.example", .failed, probe: false, now: t0)
        #expect(circuits.count == 3)
        // Full: the origins only counting failures go, the open circuit stays.
        circuits.record("https://c.example", .failed, probe: false, now: t0)
        #expect(circuits.count == 2)
        #expect(circuits.isOpen("https://open.example"))
        // A table of open circuits only is emptied.
        settings.failures = 1
        let allOpen = OriginCircuits(settings: settings)
        for name in ["x", "y", "z", "w"] { allOpen.record("https://\(name).example", .failed, probe: false, now: t0) }
        #expect(allOpen.count == 1)
        #expect(allOpen.isOpen("https://w.example"))
    }
}
