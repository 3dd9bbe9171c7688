public import CoreMetrics
public import Logging

/// Records results in a back end's ``OriginCircuits`` and reports what they change: a server's circuit
/// opening or closing is a `notice` naming the server (`push service`, `push server`: the back end's word
/// for it), and `pushgate_push_services_failing{app}` holds how many are open.
public struct OriginCircuitReporter: Sendable {
    /// The circuits it records in and counts.
    public let circuits: OriginCircuits
    private let appID: String
    private let noun: String
    private let metadataKey: String
    private let logger: Logger
    private let failing: Gauge?

    /// Creates the reporter and sets the gauge to 0.
    /// - Parameters:
    ///   - noun: what the back end calls a server, as the log says it (`push service`).
    ///   - metricsFactory: where the gauge goes; nil for none.
    public init(circuits: OriginCircuits, appID: String, noun: String, logger: Logger, metricsFactory: (any MetricsFactory)?) {
        self.circuits = circuits
        self.appID = appID
        self.noun = noun
        self.metadataKey = noun.replacingSpaces()
        self.logger = logger
        self.failing = metricsFactory.map { Gauge(label: "pushgate_push_services_failing", dimensions: [("app", appID)], factory: $0) }
        self.failing?.record(0)
    }

    /// Records `result` of a request to `origin` admitted as `probe` (``OriginCircuits/record(_:_:probe:now:)``),
    /// logs the change it makes to the circuit and records how many are open.
    public func record(_ origin: String, _ result: OriginCircuits.Result, probe: Bool) {
        let change = self.circuits.record(origin, result, probe: probe)
        if change != .none { self.refresh() }
        switch change {
        case .none:
            break
        case .opened(let interval, let failures):
            self.logger.notice(
                "\(self.noun) failing; its deliveries wait",
                metadata: ["app": "\(self.appID)", "\(self.metadataKey)": "\(origin)", "failures_in_a_row": "\(failures)", "next_try_in": "\(interval)"]
            )
        case .closed:
            self.logger.notice("\(self.noun) answering again", metadata: ["app": "\(self.appID)", "\(self.metadataKey)": "\(origin)"])
        }
    }

    /// Records how many circuits are open now (see ``OriginCircuits/openCount(now:)``): after a change,
    /// and now and then, as circuits nobody probes drop out of the count without one.
    public func refresh() {
        self.failing?.record(self.circuits.openCount())
    }

    /// Refreshes the count every `interval` until the task is cancelled.
    public func refreshEvery(_ interval: Duration) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            self.refresh()
        }
    }
}

extension String {
    /// The text with each space an underscore (a log metadata key).
    fileprivate func replacingSpaces() -> String {
        String(self.map { $0 == " " ? "_" : $0 })
    }
}
