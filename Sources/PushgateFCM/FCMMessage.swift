import PushgateCore
import PushgateProviderSupport

/// Builds the body of `messages:send` for one notification and one registration token.
enum FCMMessage {
    /// `{"message": payload, with the token}`, and in `android` the notification's stated priority, time
    /// to live and collapse id where the payload sets none; or nil when the payload is not a JSON object.
    /// Nothing the front end left out is added: no `android` section unless the payload or a stated field
    /// makes one. (Sygnal's per-app `fcm_options` are the Matrix front end's: it merges them into its
    /// payloads.)
    static func body(notification: PushNotification, token: String) -> JSONValue? {
        guard case .object(var message) = notification.payload else { return nil }
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
