import PushgateCore
import PushgateProviderSupport

/// Builds the body of `messages:send` for one notification and one registration token.
enum FCMMessage {
    /// `{"message": fcm_options ⊕ payload, with the token}`, and in `android` the notification's stated
    /// priority, time to live and collapse id where the payload sets none; or nil when the payload is not
    /// a JSON object. Nothing the front end left out is added: no `android` section unless the payload,
    /// the app's `fcm_options` or a stated field makes one.
    static func body(options: [String: JSONValue], notification: PushNotification, token: String) -> JSONValue? {
        guard case .object = notification.payload else { return nil }
        guard case .object(var message) = JSONValue.object(options).merging(notification.payload) else { return nil }
        guard var android = StatedSection(message["android"]) else { return nil }
        if let priority = notification.priority { android.state("priority", .string(priority == .high ? "HIGH" : "NORMAL")) }
        if let ttl = notification.timeToLive { android.state("ttl", .string("\(max(0, ttl))s")) }
        if let collapseID = notification.collapseID, !collapseID.isEmpty { android.state("collapse_key", .string(collapseID)) }
        message["android"] = android.value
        // A topic or condition send (the front end put `topic` or `condition` in the payload) has no token.
        if StatedSection.isTopicSend(message) { return .object(["message": .object(message)]) }
        message["token"] = .string(token)
        return .object(["message": .object(message)])
    }
}
