import Foundation
import PushgateCore
import PushgateHTTP
import Synchronization

/// The Status server's counts since start and its Waku node's state, for the operator console:
/// registrations, queries, push requests by report code, the last poll and whether it succeeded, and the
/// windows asked of the node's store (backfills). Atomic updates only, no lock.
final class StatusFigures: Sendable {
    /// The report codes of push requests' answers, in the order the console lists them.
    static let reportCodes = ["SUCCESS", "WRONG_TOKEN", "INTERNAL_ERROR", "NOT_REGISTERED", "UNKNOWN_ERROR_TYPE"]

    let registrations = ConsoleCounter()
    let queries = ConsoleCounter()
    let pushRequests = ConsoleCounter()
    let backfills = ConsoleCounter()
    private let reports = (0..<StatusFigures.reportCodes.count).map { _ in ConsoleCounter() }
    /// The last poll that succeeded and the last that failed, in milliseconds since 1970 (0: none yet).
    private let lastPoll = Atomic<Int64>(0)
    private let lastPollFailure = Atomic<Int64>(0)

    /// A push request's report with `code` (one of ``reportCodes``; any other counts as the last).
    func report(_ code: String) {
        self.reports[Self.reportCodes.firstIndex(of: code) ?? Self.reportCodes.count - 1].add()
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
    var figures: [FrontEndFigure] {
        let (succeeded, failed) = (self.lastPoll.load(ordering: .relaxed), self.lastPollFailure.load(ordering: .relaxed))
        let node = succeeded == 0 && failed == 0 ? "not polled yet" : succeeded >= failed ? "reachable" : "unreachable"
        var figures = [
            FrontEndFigure(key: "registrations", label: "Registrations", value: .count(self.registrations.value)),
            FrontEndFigure(key: "queries", label: "Queries", value: .count(self.queries.value)),
            FrontEndFigure(key: "push_requests", label: "Push requests", value: .count(self.pushRequests.value)),
        ]
        for (code, counter) in zip(Self.reportCodes, self.reports) {
            figures.append(FrontEndFigure(key: "reports_" + code.lowercased(), label: "Reports \(code)", value: .count(counter.value)))
        }
        figures += [
            FrontEndFigure(key: "waku_node", label: "Waku node", value: .text(node)),
            FrontEndFigure(key: "last_poll", label: "Last poll", value: .time(succeeded == 0 ? nil : Date(millisecondsSince1970: succeeded))),
            FrontEndFigure(key: "backfills", label: "Backfills", value: .count(self.backfills.value)),
        ]
        return figures
    }
}
