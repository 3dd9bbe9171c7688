import CoreMetrics
import Logging
import PushgateStore
import PushgateCore
import PushgateHTTP
import PushgateStatusWire

/// The Status server's counters on `/metrics`: registrations, queries and push requests with their
/// outcomes, what the poll loop saw, Waku REST failures, and catching up from the node's store.
struct StatusMetrics: Sendable {
    private let factory: any MetricsFactory
    let polled: Counter
    let notOurs: Counter
    let duplicate: Counter
    let own: Counter
    let cacheFull: Counter
    let queries: Counter
    let pushRequests: Counter
    let dropped: Counter
    let answersPublished: Counter
    let backfillQueries: Counter
    let recovered: Counter
    /// The same events kept for the operator console.
    let figures: StatusFigures

    /// Metrics recorded through `factory`; the console's counts kept in `store` (in memory only when nil).
    init(factory: any MetricsFactory, store: (any CounterStore)? = nil, logger: Logger = Logger(label: "pushgate.status")) {
        self.factory = factory
        self.figures = StatusFigures(store: store, logger: logger)
        self.polled = Counter(label: "pushgate_status_messages_polled_total", factory: factory)
        self.notOurs = Counter(label: "pushgate_status_messages_not_ours_total", factory: factory)
        self.duplicate = Counter(label: "pushgate_status_messages_duplicate_total", factory: factory)
        self.own = Counter(label: "pushgate_status_messages_own_total", factory: factory)
        self.cacheFull = Counter(label: "pushgate_status_poll_cache_full_total", factory: factory)
        self.queries = Counter(label: "pushgate_status_queries_total", factory: factory)
        self.pushRequests = Counter(label: "pushgate_status_push_requests_total", factory: factory)
        self.dropped = Counter(label: "pushgate_status_registrations_dropped_total", factory: factory)
        self.answersPublished = Counter(label: "pushgate_status_answers_published_total", factory: factory)
        self.backfillQueries = Counter(label: "pushgate_status_backfill_queries_total", factory: factory)
        self.recovered = Counter(label: "pushgate_status_backfill_messages_recovered_total", factory: factory)
    }

    func registration(_ result: StatusRegistrationHandler.Result) {
        self.figures.add(.registrations)
        Counter(label: "pushgate_status_registrations_total", dimensions: [("result", result.rawValue)], factory: self.factory).increment()
    }

    func report(_ code: String) {
        self.figures.report(code)
        Counter(label: "pushgate_status_push_reports_total", dimensions: [("code", code)], factory: self.factory).increment()
    }

    func wakuError(_ operation: String) {
        if operation == "poll" { self.figures.polled(ok: false) }
        Counter(label: "pushgate_status_waku_errors_total", dimensions: [("operation", operation)], factory: self.factory).increment()
    }

    func deliveryEnded(_ outcome: DeliveryOutcome) {
        Counter(label: "pushgate_status_deliveries_total", dimensions: [("outcome", outcome.label)], factory: self.factory).increment()
    }

    func registrationDropped() { self.dropped.increment() }

    /// A window asked of the store, and why.
    func backfill(_ reason: StatusBackfillPlanner.Reason) {
        self.figures.add(.backfills)
        Counter(label: "pushgate_status_backfills_total", dimensions: [("reason", reason.rawValue)], factory: self.factory).increment()
    }

    /// A store query that failed, by kind (`no_store_peer`, `unreachable`, `refused`, `malformed`).
    func storeError(_ error: WakuRelayError) {
        let kind =
            switch error {
            case .noStorePeer: "no_store_peer"
            case .unreachable: "unreachable"
            case .malformedAnswer: "malformed"
            case .initializing, .notSubscribed, .refused: "refused"
            }
        Counter(label: "pushgate_status_store_errors_total", dimensions: [("kind", kind)], factory: self.factory).increment()
    }
}

extension StatusMetrics {
    /// A query answered (counted on `/metrics` and for the console).
    func queried() {
        self.queries.increment()
        self.figures.add(.queries)
    }

    /// A push request received (counted on `/metrics` and for the console).
    func pushRequested() {
        self.pushRequests.increment()
        self.figures.add(.pushRequests)
    }
}
