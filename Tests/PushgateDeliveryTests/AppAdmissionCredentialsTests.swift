import PushgateCore
import Testing

@testable import PushgateDelivery

/// An app whose credentials the provider refuses: its deliveries fail at once as retry later, one probe
/// goes through per interval, and a delivered notification ends it.
@Suite("credentials failing")
struct AppAdmissionCredentialsTests {
    static func admission(probeEvery interval: Duration) -> AppAdmission {
        var settings = AppAdmission.CircuitSettings()
        settings.credentialsProbeInterval = interval
        return AppAdmission(limits: [:], circuit: settings)
    }

    @Test func aRefusalHoldsTheAppUntilAProbeSucceeds() async throws {
        // Held: with a minute's interval, the delivery asked right after the refusal comes well inside it.
        let held = Self.admission(probeEvery: .seconds(60))
        #expect(held.acquire("a") == .admitted(probe: false))
        #expect(held.release("a", outcome: .credentialsRefused(reason: "InvalidProviderToken"), probe: false) == .credentialsFailing(reason: "InvalidProviderToken"))
        guard case .credentialsFailing(let remaining, let reason) = held.acquire("a") else {
            Issue.record("deliveries must fail at once while the credentials are refused")
            return
        }
        #expect(remaining > .zero && remaining <= .seconds(60))
        #expect(reason == "InvalidProviderToken")
        // Another app is untouched.
        #expect(held.acquire("b") == .admitted(probe: false))

        // The probes: a short interval, each waited out before the next step, so no check below depends on
        // the interval not having passed yet.
        let admission = Self.admission(probeEvery: .milliseconds(300))
        #expect(admission.acquire("a") == .admitted(probe: false))
        #expect(admission.release("a", outcome: .credentialsRefused(reason: "InvalidProviderToken"), probe: false) == .credentialsFailing(reason: "InvalidProviderToken"))
        try await Task.sleep(for: .milliseconds(400))
        #expect(admission.acquire("a") == .admitted(probe: true))
        // While the probe is out, the others still wait.
        guard case .credentialsFailing = admission.acquire("a") else {
            Issue.record("one probe at a time")
            return
        }
        // The probe is refused again for the same reason: no new log line, another interval.
        #expect(admission.release("a", outcome: .credentialsRefused(reason: "InvalidProviderToken"), probe: true) == .none)
        try await Task.sleep(for: .milliseconds(400))
        #expect(admission.acquire("a") == .admitted(probe: true))
        // A transient failure says nothing of the credentials.
        #expect(admission.release("a", outcome: .retryLater(after: nil, reason: "503"), probe: true) == .none)
        try await Task.sleep(for: .milliseconds(400))
        #expect(admission.acquire("a") == .admitted(probe: true))
        #expect(admission.release("a", outcome: .delivered, probe: true) == .credentialsRecovered)
        #expect(admission.acquire("a") == .admitted(probe: false))
    }

    /// A probe the back end refused itself (a token with spaces, a payload over the limit) never reached
    /// the provider's check of the credentials: the state stays, and the next delivery is the probe.
    @Test func aProbeRefusedBeforeItReachedTheProviderHandsTheProbeBack() async throws {
        // An interval long enough that "at once" below cannot be mistaken for an interval later.
        let admission = Self.admission(probeEvery: .seconds(3))
        #expect(admission.acquire("a") == .admitted(probe: false))
        _ = admission.release("a", outcome: .credentialsRefused(reason: "InvalidProviderToken"), probe: false)
        try await Task.sleep(for: .milliseconds(3_100))
        for refusedHere: DeliveryOutcome in [.rejected(reason: "PayloadTooLarge"), .invalidToken(reason: "BadDeviceToken")] {
            #expect(admission.acquire("a") == .admitted(probe: true))
            #expect(admission.release("a", outcome: refusedHere, probe: true) == .none)
            #expect(admission.snapshot("a").credentialsFailing, "\(refusedHere.label) says nothing of the credentials")
        }
        // At once, not an interval later.
        #expect(admission.acquire("a") == .admitted(probe: true), "the probe was handed back")
        #expect(admission.release("a", outcome: .delivered, probe: true) == .credentialsRecovered)
        #expect(!admission.snapshot("a").credentialsFailing)
    }

    /// An outcome that does not count (a retired back end's) still hands back the probe it went as.
    @Test func anOutcomeThatDoesNotCountHandsBackItsProbe() async throws {
        // An interval long enough that the probe handed back below cannot be mistaken for the next interval's.
        let admission = Self.admission(probeEvery: .seconds(3))
        #expect(admission.acquire("a") == .admitted(probe: false))
        _ = admission.release("a", outcome: .credentialsRefused(reason: "InvalidProviderToken"), probe: false)
        try await Task.sleep(for: .milliseconds(3_100))
        let (verdict, generation) = admission.admit("a")
        #expect(verdict == .admitted(probe: true))
        #expect(admission.release("a", outcome: .credentialsRefused(reason: "Forbidden"), probe: true, circuit: false, generation: generation) == .none)
        #expect(admission.acquire("a") == .admitted(probe: true))
    }

    @Test func aReloadThatChangesTheAppClearsIt() {
        let admission = Self.admission(probeEvery: .seconds(60))
        #expect(admission.acquire("a") == .admitted(probe: false))
        _ = admission.release("a", outcome: .credentialsRefused(reason: "BadCertificate"), probe: false)
        admission.reconfigure(limits: [:], resetting: ["a"])
        #expect(admission.acquire("a") == .admitted(probe: false))
    }

    /// A delivery that was out when the reload replaced the app's back end (a probe of the old, refused
    /// key) returns its slot, but its outcome is the retired back end's: the new one stays admitted.
    @Test func anOutcomeFromBeforeAReloadDoesNotMoveTheNewCircuit() {
        let admission = Self.admission(probeEvery: .seconds(60))
        let (_, old) = admission.admit("a")
        admission.reconfigure(limits: [:], resetting: ["a"])
        #expect(admission.release("a", outcome: .credentialsRefused(reason: "InvalidProviderToken"), probe: true, generation: old) == .none)
        let (verdict, current) = admission.admit("a")
        #expect(verdict == .admitted(probe: false))
        #expect(admission.snapshot("a").inFlight == 1, "the old delivery's slot came back")
        // Five timeouts of old deliveries do not open the new back end's circuit either.
        for _ in 0..<5 { _ = admission.admit("a") }
        for _ in 0..<5 { _ = admission.release("a", outcome: .retryLater(after: nil, reason: "timeout"), probe: false, generation: old) }
        #expect(!admission.isOpen("a"))
        // The new back end's own refusal does count.
        #expect(admission.release("a", outcome: .credentialsRefused(reason: "BadCertificate"), probe: false, generation: current) == .credentialsFailing(reason: "BadCertificate"))
    }

    @Test func aRefusalIsNotCountedTowardsTheCircuit() {
        let admission = Self.admission(probeEvery: .zero)
        for _ in 0..<10 {
            guard case .admitted(let probe) = admission.acquire("a") else {
                Issue.record("a probe is due at once with a zero interval")
                return
            }
            _ = admission.release("a", outcome: .credentialsRefused(reason: "Forbidden"), probe: probe)
        }
        #expect(!admission.isOpen("a"))
    }
}
