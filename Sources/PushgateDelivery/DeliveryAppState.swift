/// An app's delivery state on this instance now, as the operator console shows it.
public struct DeliveryAppState: Sendable, Equatable {
    /// Deliveries in flight.
    public var inFlight: Int
    /// Whether its circuit is open (its provider is failing; deliveries fail at once until a probe succeeds).
    public var circuitOpen: Bool
    /// Whether the provider refuses the app's credentials.
    public var credentialsFailing: Bool
    /// Whether the app has one circuit per push service or host (Web Push, UnifiedPush) instead of
    /// ``circuitOpen``, which is then always false.
    public var circuitsPerServer = false
    /// The provider's latency over this instance's recent deliveries, median and 99th percentile, in
    /// milliseconds; nil before the first.
    public var latencyMilliseconds: (p50: Double, p99: Double)?

    /// Creates a state.
    public init(inFlight: Int, circuitOpen: Bool, credentialsFailing: Bool, latencyMilliseconds: (p50: Double, p99: Double)?) {
        self.inFlight = inFlight
        self.circuitOpen = circuitOpen
        self.credentialsFailing = credentialsFailing
        self.latencyMilliseconds = latencyMilliseconds
    }

    /// An app's circuit as the console shows it.
    public enum Circuit: String, Sendable {
        case open
        case closed
        /// One circuit per push service or host (``DeliveryAppState/circuitsPerServer``).
        case perService = "per_service"
    }

    /// The circuit as one of its three states.
    public var circuit: Circuit {
        self.circuitsPerServer ? .perService : self.circuitOpen ? .open : .closed
    }

    public static func == (lhs: DeliveryAppState, rhs: DeliveryAppState) -> Bool {
        lhs.inFlight == rhs.inFlight && lhs.circuitOpen == rhs.circuitOpen && lhs.credentialsFailing == rhs.credentialsFailing
            && lhs.circuitsPerServer == rhs.circuitsPerServer
            && lhs.latencyMilliseconds?.p50 == rhs.latencyMilliseconds?.p50 && lhs.latencyMilliseconds?.p99 == rhs.latencyMilliseconds?.p99
    }
}
