import Foundation
import Logging
import PushgateCore
import PushgateHTTP
import PushgateStore
import Synchronization

/// The Status server's counts for the operator console (every instance's on the store: registrations,
/// queries, push requests by report code, the windows asked of the node's store) and this instance's view
/// of its Waku node (the last poll and whether it succeeded). Atomic updates for the poll, a lock and an
/// add for a count.
final class StatusFigures: Sendable {
    /// The report codes of push requests' answers, in the order the console lists them.
    static let reportCodes = ["SUCCESS", "WRONG_TOKEN", "INTERNAL_ERROR", "NOT_REGISTERED", "UNKNOWN_ERROR_TYPE"]

    /// The counts: ``Count``'s, then one for each of ``reportCodes``.
    let counts: ConsoleCounts
    /// The counts' indices before the report codes'.
    enum Count: Int, CaseIterable { case registrations, queries, pushRequests, backfills }
    /// The last poll that succeeded and the last that failed, in milliseconds since 1970 (0: none yet).
    private let lastPoll = Atomic<Int64>(0)
    private let lastPollFailure = Atomic<Int64>(0)

    /// Counts kept in `store` (in memory only when nil).
    init(store: (any CounterStore)?, logger: Logger) {
        let keys = ["registrations", "queries", "push_requests", "backfills"] + Self.reportCodes.map { "reports_" + $0.lowercased() }
        self.counts = ConsoleCounts(frontEnd: "status", keys: keys, store: store, logger: logger)
    }

    /// Counts one event.
    func add(_ count: Count) {
        self.counts.add(at: count.rawValue)
    }

    /// A push request's report with `code` (one of ``reportCodes``; any other counts as the last).
    func report(_ code: String) {
        self.counts.add(at: Count.allCases.count + (Self.reportCodes.firstIndex(of: code) ?? Self.reportCodes.count - 1))
    }

    /// A poll of the Waku node succeeded (`ok`) or failed.
    func polled(ok: Bool, at now: Date = Date()) {
        if ok {
            self.lastPoll.store(now.millisecondsSince1970, ordering: .relaxed)
        } else {
            self.lastPollFailure.store(now.millisecondsSince1970, ordering: .relaxed)
        }
    }

    /// What the operator console shows.
    func figures() async -> [FrontEndFigure] {
        let values = await self.counts.values()
        let (succeeded, failed) = (self.lastPoll.load(ordering: .relaxed), self.lastPollFailure.load(ordering: .relaxed))
        let node = succeeded == 0 && failed == 0 ? "not polled yet" : succeeded >= failed ? "reachable" : "unreachable"
        var figures = [
            FrontEndFigure(key: "registrations", label: "Registrations", value: values[Count.registrations.rawValue]),
            FrontEndFigure(key: "queries", label: "Queries", value: values[Count.queries.rawValue]),
            FrontEndFigure(key: "push_requests", label: "Push requests", value: values[Count.pushRequests.rawValue]),
        ]
        for (index, code) in Self.reportCodes.enumerated() {
            figures.append(FrontEndFigure(key: "reports_" + code.lowercased(), label: "Reports \(code)", value: values[Count.allCases.count + index]))
        }
        figures += [
            FrontEndFigure(key: "waku_node", label: "Waku node", value: .text(node)),
            FrontEndFigure(key: "last_poll", label: "Last poll", value: .time(succeeded == 0 ? nil : Date(millisecondsSince1970: succeeded))),
            FrontEndFigure(key: "backfills", label: "Backfills", value: values[Count.backfills.rawValue]),
        ]
        return figures
    }
}
