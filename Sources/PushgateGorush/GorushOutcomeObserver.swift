import PushgateCore
import PushgateDelivery

/// Hears how queued gorush notifications ended: counts them and sends failures to the feedback webhook.
struct GorushOutcomeObserver: DeliveryOutcomeObserver {
    let frontEnd = GorushFrontEnd.name
    let stats: GorushStats
    let feedback: GorushFeedback?
    let hideToken: Bool
    let hideMessages: Bool

    /// The report context of a queued delivery: `notif_id`, platform and message.
    static func context(notifID: String, platform: GorushNotification.Platform, message: String) -> JSONValue {
        ["n": .string(notifID), "p": .number(Double(platform.rawValue)), "m": .string(message)]
    }

    func deliveryEnded(_ report: DeliveryReport, appID: String, token: String, outcome: DeliveryOutcome) async {
        guard case .number(let number)? = report.context["p"], let raw = Int(exactly: number), let platform = GorushNotification.Platform(rawValue: raw)
        else { return }
        guard let error = GorushErrorText.text(for: outcome, platform: platform) else {
            self.stats.delivered(platform, succeeded: 1, failed: 0, fromQueue: true)
            return
        }
        self.stats.delivered(platform, succeeded: 0, failed: 1, fromQueue: true)
        guard let feedback = self.feedback else { return }
        var notification = GorushNotification()
        notification.notifID = report.context["n"]?.stringValue ?? ""
        notification.message = report.context["m"]?.stringValue ?? ""
        let entry = GorushLogEntry(
            failureOf: notification, platform: platform, token: token, error: error, hideToken: self.hideToken, hideMessages: self.hideMessages
        )
        await feedback.send([entry])
    }
}
