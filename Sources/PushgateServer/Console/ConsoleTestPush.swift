import Foundation
import Logging
import PushgateCore
import PushgateDelivery

/// The console's test push: one notification with an alert text to one token, through the gateway's own
/// dispatcher and back ends (as `pushgate send` builds it), its outcome and the provider's reason
/// reported, and a log line naming the admin's token fingerprint and the device token's (never either
/// token, nor the text).
struct ConsoleTestPush: Sendable {
    /// A request the console refuses before sending anything.
    struct Refusal: Error {
        var message: String
    }

    let dispatcher: Dispatcher
    let timeout: Duration
    let logger: Logger

    func send(app: String, token: String, alert: String, admin: ConsoleAdmins.Admin) async throws(Refusal) -> ConsolePage.TestPushResult {
        guard !app.isEmpty else { throw Refusal(message: "choose an app") }
        guard !token.isEmpty, token.utf8.count <= 8192 else { throw Refusal(message: "give a device token (at most 8 KiB)") }
        guard !alert.isEmpty, alert.utf8.count <= 1024 else { throw Refusal(message: "give an alert text (at most 1 KiB)") }
        guard case .found(let provider) = self.dispatcher.directory.lookup(app) else {
            throw Refusal(message: "no app with this id is configured")
        }
        let notification = SendMessage(alert: alert, data: [:], kind: .alert, priority: nil).notification(for: provider.platform)
        let outcome = await self.dispatcher.deliver(notification, via: provider, token: token, deadline: .now + self.timeout, frontEnd: "console")
        self.logger.notice(
            "console: test push",
            metadata: [
                "admin": "\(admin.fingerprint)", "app": "\(provider.appID)", "token": "\(Redaction.fingerprint(token))", "outcome": "\(outcome.label)",
            ]
        )
        return ConsolePage.TestPushResult(app: provider.appID, outcome: outcome.label, reason: outcome.failureReason)
    }
}
