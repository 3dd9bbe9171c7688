import PushgateCore
import Synchronization

/// Decides, per app, whether a delivery may go to the provider now: at most `inflight_request_limit`
/// deliveries in flight (Sygnal's cap: one over it fails at once instead of queueing, so one slow provider
/// cannot hold every request), and a circuit that opens after ``CircuitSettings/failures`` retry-later
/// outcomes in a row (refused connections, 5xx, deadlines: a provider that is down or hangs).
///
/// While an app's circuit is open its deliveries fail at once as retry later, so outbox workers, event
/// loops and in-flight slots are not spent on it; when the interval ends one delivery goes through as a
/// probe. A probe that succeeds closes the circuit; one that fails opens it again for twice as long (up to
/// ``CircuitSettings/maximumOpen``). Any other app is untouched. One lock per admission and one per
/// release, as the in-flight count alone took; the clock is read only while a circuit is open or opening.
final class AppAdmission: Sendable {
    /// When the circuit opens and for how long.
    struct CircuitSettings: Sendable {
        /// Retry-later outcomes in a row that open the circuit.
        var failures = 5
        /// How long it stays open the first time.
        var initialOpen: Duration = .seconds(1)
        /// The longest it stays open.
        var maximumOpen: Duration = .seconds(60)
        /// While the provider refuses the app's credentials, how often one delivery goes through to see
        /// whether they work again.
        var credentialsProbeInterval: Duration = .seconds(60)
    }

    /// Whether a delivery may go.
    enum Verdict: Equatable {
        /// It may; `probe` when it tests an open circuit.
        case admitted(probe: Bool)
        /// The app has `inflight_request_limit` deliveries in flight.
        case overLimit
        /// The app's circuit is open for this much longer (zero while a probe is out); `requested` is
        /// the pause the provider itself asked for last, if it did.
        case circuitOpen(remaining: Duration, requested: Duration?)
        /// The provider refused the app's credentials (`reason`); the next probe goes in `remaining`
        /// (zero while one is out).
        case credentialsFailing(remaining: Duration, reason: String)
    }

    /// What a release changed about the app's circuit, for the log and metrics.
    enum CircuitChange: Equatable {
        case none
        /// It opened (or opened again after a failed probe) for this long.
        case opened(for: Duration, failures: Int)
        /// A delivery succeeded after it had opened.
        case closed
        /// The provider refused the app's credentials, for the first time or for another reason.
        case credentialsFailing(reason: String)
        /// The provider answered a delivery of an app whose credentials it had refused.
        case credentialsRecovered
    }

    /// One app's deliveries in flight, its cap and its circuit.
    private struct Slot {
        var count = 0
        var limit: Int
        var failuresInARow = 0
        /// Set while the circuit is open: when a probe may go.
        var openUntil: ContinuousClock.Instant?
        var openFor: Duration = .zero
        var probing = false
        /// The pause the provider asked for with its last retry-later outcome (Retry-After), if any.
        var requested: Duration?
        /// Set while the provider refuses the app's credentials: its reason, and when a probe may go.
        var credentialsReason: String?
        var credentialsProbeAt: ContinuousClock.Instant?
        var credentialsProbing = false
        /// Raised when a reload resets the app: outcomes of deliveries admitted before then came from the
        /// retired back end and move the new one's circuit no more.
        var generation: UInt64 = 0
    }

    private let slots = Mutex<[String: Slot]>([:])
    /// Each app's cap, replaced by ``reconfigure(limits:resetting:)``; read when an app's slot is made.
    private let limits: LiveValue<[String: Int]>
    private let defaultLimit: Int
    private let circuit: CircuitSettings

    /// How often one delivery of an app whose credentials the provider refused goes through.
    var credentialsProbeInterval: Duration { self.circuit.credentialsProbeInterval }

    init(limits: [String: Int], defaultLimit: Int = 512, circuit: CircuitSettings = CircuitSettings()) {
        self.limits = LiveValue(limits)
        self.defaultLimit = defaultLimit
        self.circuit = circuit
    }

    /// Takes a slot for `appID` unless its cap is reached or its circuit is open.
    func acquire(_ appID: String) -> Verdict {
        self.admit(appID).verdict
    }

    /// ``acquire(_:)``, with the app's generation to hand back to ``release(_:outcome:probe:circuit:generation:)``.
    func admit(_ appID: String) -> (verdict: Verdict, generation: UInt64) {
        self.slots.withLock { slots in
            // One lookup, through the subscript's in-place access; the limit is looked up the first time.
            let verdict = Self.take(&slots[appID, default: Slot(limit: self.limits.current[appID] ?? self.defaultLimit)])
            return (verdict, slots[appID]?.generation ?? 0)
        }
    }

    /// Takes a reloaded configuration's caps; the circuits of `resetting` (apps added, changed or removed:
    /// new credentials or a new endpoint deserve a fresh start) close. Deliveries in flight keep their
    /// slots and return them as usual.
    func reconfigure(limits: [String: Int], resetting: Set<String>) {
        self.limits.replace(limits)
        self.slots.withLock { slots in
            for appID in slots.keys {
                slots[appID]?.limit = limits[appID] ?? self.defaultLimit
                if resetting.contains(appID) {
                    slots[appID]?.generation &+= 1
                    slots[appID]?.credentialsReason = nil
                    slots[appID]?.credentialsProbeAt = nil
                    slots[appID]?.credentialsProbing = false
                    slots[appID]?.failuresInARow = 0
                    slots[appID]?.openUntil = nil
                    slots[appID]?.openFor = .zero
                    slots[appID]?.probing = false
                    slots[appID]?.requested = nil
                }
            }
        }
    }

    /// Returns a slot taken by ``acquire(_:)`` with the delivery's outcome, which moves the circuit unless
    /// `circuit` is false (a provider whose failures are each server's own, see
    /// ``PushProvider/sharesOneCircuit``: its circuit never opens) or `generation` (from ``admit(_:)``) is
    /// not the app's any more (a reload reset it while the delivery was out: the outcome is the retired
    /// back end's, such as a refused old key).
    func release(_ appID: String, outcome: DeliveryOutcome, probe: Bool, circuit: Bool = true, generation: UInt64? = nil) -> CircuitChange {
        self.slots.withLock { slots in
            guard var slot = slots[appID] else { return .none }
            slot.count -= 1
            let current = generation.map { $0 == slot.generation } ?? true
            let change: CircuitChange
            if circuit && current {
                change = self.record(outcome, probe: probe, in: &slot)
            } else {
                // An outcome that does not count still hands back the probe it was admitted as (of this
                // generation: a reset already freed the old one's), so the next delivery probes.
                if probe && current {
                    slot.probing = false
                    slot.credentialsProbing = false
                }
                change = .none
            }
            slots[appID] = slot
            return change
        }
    }

    /// `appID`'s deliveries in flight, whether its circuit is open and whether its credentials are refused.
    func snapshot(_ appID: String) -> (inFlight: Int, circuitOpen: Bool, credentialsFailing: Bool) {
        self.slots.withLock { slots in
            guard let slot = slots[appID] else { return (0, false, false) }
            return (slot.count, slot.openUntil != nil, slot.credentialsReason != nil)
        }
    }

    /// Whether `appID`'s circuit is open now (a probe out counts as open).
    func isOpen(_ appID: String) -> Bool {
        self.slots.withLock { $0[appID]?.openUntil != nil }
    }

    private static func take(_ slot: inout Slot) -> Verdict {
        var probe = false
        if let reason = slot.credentialsReason {
            let now = ContinuousClock.now
            let probeAt = slot.credentialsProbeAt ?? now
            guard now >= probeAt, !slot.credentialsProbing else {
                return .credentialsFailing(remaining: max(.zero, probeAt - now), reason: reason)
            }
            guard slot.count < slot.limit else { return .overLimit }
            slot.count += 1
            slot.credentialsProbing = true
            return .admitted(probe: true)
        }
        if let openUntil = slot.openUntil {
            let now = ContinuousClock.now
            guard now >= openUntil else { return .circuitOpen(remaining: openUntil - now, requested: slot.requested) }
            guard !slot.probing else { return .circuitOpen(remaining: .zero, requested: slot.requested) }
            probe = true
        }
        guard slot.count < slot.limit else { return .overLimit }
        slot.count += 1
        if probe { slot.probing = true }
        return .admitted(probe: probe)
    }

    private func record(_ outcome: DeliveryOutcome, probe: Bool, in slot: inout Slot) -> CircuitChange {
        if probe, slot.credentialsProbing { slot.credentialsProbing = false }
        if case .credentialsRefused(let reason) = outcome {
            let before = slot.credentialsReason
            slot.credentialsReason = reason
            slot.credentialsProbeAt = ContinuousClock.now + self.circuit.credentialsProbeInterval
            return before == reason ? .none : .credentialsFailing(reason: reason)
        }
        if slot.credentialsReason != nil {
            switch outcome {
            case .delivered:
                // The provider took the credentials.
                slot.credentialsReason = nil
                slot.credentialsProbeAt = nil
                slot.failuresInARow = 0
                slot.openUntil = nil
                slot.openFor = .zero
                slot.probing = false
                return .credentialsRecovered
            case .retryLater:
                // A probe that met a transient failure says nothing of the credentials: try again later.
                slot.credentialsProbeAt = ContinuousClock.now + self.circuit.credentialsProbeInterval
                return .none
            case .invalidToken, .rejected, .credentialsRefused:
                // A token or notification the back end refused itself (a malformed token, a payload over
                // the limit) never reached the provider's check of the credentials: the probe was handed
                // back above and the next delivery is one.
                return .none
            }
        }
        guard case .retryLater(let requested, _) = outcome else {
            // The provider answered: whatever it said, it is there.
            slot.failuresInARow = 0
            slot.requested = nil
            guard slot.openUntil != nil else { return .none }
            slot.openUntil = nil
            slot.openFor = .zero
            slot.probing = false
            return .closed
        }
        slot.failuresInARow += 1
        slot.requested = requested
        if probe {
            slot.probing = false
            slot.openFor = min(self.circuit.maximumOpen, slot.openFor * 2)
            // Never probing sooner than the provider asked.
            let open = max(slot.openFor, requested ?? .zero)
            slot.openUntil = ContinuousClock.now + open
            return .opened(for: open, failures: slot.failuresInARow)
        }
        guard slot.openUntil == nil, slot.failuresInARow >= self.circuit.failures else { return .none }
        slot.openFor = self.circuit.initialOpen
        let open = max(slot.openFor, requested ?? .zero)
        slot.openUntil = ContinuousClock.now + open
        return .opened(for: open, failures: slot.failuresInARow)
    }
}
