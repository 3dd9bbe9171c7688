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
    }

    /// What a release changed about the app's circuit, for the log and metrics.
    enum CircuitChange: Equatable {
        case none
        /// It opened (or opened again after a failed probe) for this long.
        case opened(for: Duration, failures: Int)
        /// A delivery succeeded after it had opened.
        case closed
    }

    /// One app's deliveries in flight, its cap and its circuit.
    private struct Slot {
        var count = 0
        let limit: Int
        var failuresInARow = 0
        /// Set while the circuit is open: when a probe may go.
        var openUntil: ContinuousClock.Instant?
        var openFor: Duration = .zero
        var probing = false
        /// The pause the provider asked for with its last retry-later outcome (Retry-After), if any.
        var requested: Duration?
    }

    private let slots = Mutex<[String: Slot]>([:])
    private let limits: [String: Int]
    private let defaultLimit: Int
    private let circuit: CircuitSettings

    init(limits: [String: Int], defaultLimit: Int = 512, circuit: CircuitSettings = CircuitSettings()) {
        self.limits = limits
        self.defaultLimit = defaultLimit
        self.circuit = circuit
    }

    /// Takes a slot for `appID` unless its cap is reached or its circuit is open.
    func acquire(_ appID: String) -> Verdict {
        self.slots.withLock { slots in
            // One lookup, through the subscript's in-place access; the limit is looked up the first time.
            Self.take(&slots[appID, default: Slot(limit: self.limits[appID] ?? self.defaultLimit)])
        }
    }

    /// Returns a slot taken by ``acquire(_:)`` with the delivery's outcome, which moves the circuit unless
    /// `circuit` is false (a provider whose failures are each server's own, see
    /// ``PushProvider/sharesOneCircuit``: its circuit never opens).
    func release(_ appID: String, outcome: DeliveryOutcome, probe: Bool, circuit: Bool = true) -> CircuitChange {
        self.slots.withLock { slots in
            guard var slot = slots[appID] else { return .none }
            slot.count -= 1
            let change = circuit ? self.record(outcome, probe: probe, in: &slot) : .none
            slots[appID] = slot
            return change
        }
    }

    /// Whether `appID`'s circuit is open now (a probe out counts as open).
    func isOpen(_ appID: String) -> Bool {
        self.slots.withLock { $0[appID]?.openUntil != nil }
    }

    private static func take(_ slot: inout Slot) -> Verdict {
        var probe = false
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
