import Logging
import PushgateCore
import PushgateDelivery

/// Queues failure entries for the feedback webhook: each entry is one post with the entry's JSON as its
/// body, delivered through the outbox by the webhook back end, so a receiver that is down gets it later.
struct GorushFeedback: Sendable {
    /// The id the webhook back end is registered under.
    static let appID = "gorush.feedback"

    let dispatcher: Dispatcher
    let logger: Logger

    /// Queues one post per entry.
    func send(_ entries: [GorushLogEntry]) async {
        guard !entries.isEmpty else { return }
        let groups = entries.map { entry in
            Dispatcher.Queued(
                PushNotification(kind: .background, priority: .normal, payload: .string(entry.json)), appID: Self.appID,
                frontEnd: GorushFrontEnd.name, tokens: ["feedback"]
            )
        }
        do {
            try await self.dispatcher.enqueue(groups)
        } catch {
            self.logger.error("gorush: could not queue feedback for the webhook", metadata: ["entries": "\(entries.count)", "error": "\(error)"])
        }
    }
}
