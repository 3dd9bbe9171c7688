import Synchronization

/// One circuit per server origin, for a back end whose deliveries go to many independent servers (Web Push
/// subscriptions name any push service): one service that is down or hangs is left alone without holding
/// up deliveries to the others, which one circuit for the whole app would.
///
/// An origin's circuit opens after ``Settings/failures`` failed requests in a row (what the back end
/// records as the server's failure: refused or lost connections and deadlines, and for Web Push 5xx and
/// 429 too). While it is open, deliveries to that origin are answered at once
/// (``Admission/open(remaining:)``); when the interval ends one delivery goes through as a probe. A probe
/// that gets an answer closes the circuit; one that fails opens it again for twice as long, up to
/// ``Settings/maximumOpen``.
///
/// Only origins that failed lately are kept (at most ``Settings/capacity``; a full table first drops
/// closed circuits, and is emptied when that freed nothing), so while every server answers an admission
/// and a record each take one uncontended lock and no hashing.
public final class OriginCircuits: Sendable {
    /// When a circuit opens and for how long.
    public struct Settings: Sendable {
        /// Failed requests in a row that open an origin's circuit.
        public var failures = 5
        /// How long it stays open the first time.
        public var initialOpen: Duration = .seconds(1)
        /// The longest it stays open.
        public var maximumOpen: Duration = .seconds(60)
        /// The most origins remembered.
        public var capacity = 10_000

        /// The defaults: 5 failures in a row, open 1 s at first and at most 60 s, 10,000 origins.
        public init() {}
    }

    /// Whether a delivery to an origin may go.
    public enum Admission: Equatable, Sendable {
        /// It may; `probe` when it tests an open circuit (its ``OriginCircuits/record(_:_:probe:now:)``
        /// must follow).
        case admitted(probe: Bool)
        /// The origin's circuit is open for this much longer (zero while a probe is out).
        case open(remaining: Duration)
    }

    /// What a request's result tells of its origin.
    public enum Result: Equatable, Sendable {
        /// The server answered (whatever it said of the subscription or the message).
        case answered
        /// The request failed for the server's sake: no connection, a lost one, 5xx, 429, its deadline.
        case failed
        /// Nothing was sent (no request slot before the deadline, say): it tells nothing of the server.
        case notSent
    }

    /// What a record changed, for the log.
    public enum Change: Equatable, Sendable {
        case none
        /// The circuit opened (or opened again after a failed probe) for this long.
        case opened(for: Duration, failures: Int)
        /// An answer came after it had opened.
        case closed
    }

    private struct Circuit {
        var failuresInARow = 0
        /// Set while the circuit is open: when a probe may go.
        var openUntil: ContinuousClock.Instant?
        var openFor: Duration = .zero
        var probing = false
    }

    private let circuits = Mutex<[String: Circuit]>([:])
    private let settings: Settings

    /// Creates the circuits, all closed.
    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Whether a delivery to `origin` may go now.
    public func admit(_ origin: String, now: @autoclosure () -> ContinuousClock.Instant = .now) -> Admission {
        self.circuits.withLock { circuits in
            guard !circuits.isEmpty, var circuit = circuits[origin], let openUntil = circuit.openUntil else { return .admitted(probe: false) }
            let now = now()
            guard now >= openUntil else { return .open(remaining: openUntil - now) }
            guard !circuit.probing else { return .open(remaining: .zero) }
            circuit.probing = true
            circuits[origin] = circuit
            return .admitted(probe: true)
        }
    }

    /// Records the result of a delivery admitted by ``admit(_:now:)`` (`probe` as it said).
    @discardableResult
    public func record(_ origin: String, _ result: Result, probe: Bool, now: @autoclosure () -> ContinuousClock.Instant = .now) -> Change {
        self.circuits.withLock { circuits in
            switch result {
            case .answered:
                guard !circuits.isEmpty, let circuit = circuits.removeValue(forKey: origin) else { return .none }
                return circuit.openUntil == nil ? .none : .closed
            case .notSent:
                if probe { circuits[origin]?.probing = false }
                return .none
            case .failed:
                if circuits[origin] == nil { self.makeRoom(in: &circuits) }
                var circuit = circuits[origin] ?? Circuit()
                defer { circuits[origin] = circuit }
                circuit.failuresInARow += 1
                if probe { circuit.probing = false }
                // A failure of a delivery admitted before the circuit opened adds to the count only.
                guard probe || (circuit.openUntil == nil && circuit.failuresInARow >= self.settings.failures) else { return .none }
                circuit.openFor = circuit.openFor == .zero ? self.settings.initialOpen : min(circuit.openFor * 2, self.settings.maximumOpen)
                circuit.openUntil = now() + circuit.openFor
                return .opened(for: circuit.openFor, failures: circuit.failuresInARow)
            }
        }
    }

    /// Whether `origin`'s circuit is open now (a probe out counts as open).
    public func isOpen(_ origin: String) -> Bool {
        self.circuits.withLock { $0[origin]?.openUntil != nil }
    }

    /// How many origins' circuits are open now (probes out included), leaving out those whose interval
    /// ended over ``Settings/maximumOpen`` ago without a probe: no delivery goes to that origin any more
    /// (its users moved, its name no longer resolves), and it would be counted as failing for good.
    public func openCount(now: ContinuousClock.Instant = .now) -> Int {
        self.circuits.withLock { circuits in
            circuits.values.reduce(0) { count, circuit in
                guard let openUntil = circuit.openUntil else { return count }
                return circuit.probing || openUntil + self.settings.maximumOpen > now ? count + 1 : count
            }
        }
    }

    /// How many origins are remembered.
    public var count: Int { self.circuits.withLock { $0.count } }

    /// Makes room for one more origin in a full table (called under the lock).
    private func makeRoom(in circuits: inout [String: Circuit]) {
        guard circuits.count >= self.settings.capacity else { return }
        circuits = circuits.filter { $0.value.openUntil != nil }
        if circuits.count >= self.settings.capacity { circuits.removeAll(keepingCapacity: true) }
    }
}
