import PushgateCore
import PushgateProviderSupport

/// Builds the body of `messages:send` for one notification and one token:
/// `{"validate_only":false,"message": payload + token}`, with `android.urgency` from a stated priority and
/// `android.ttl` from a stated time to live when the payload does not set them; nothing the front end
/// left out is added (no `android` section unless the payload or a stated field makes one).
enum HMSMessage {
    static func body(notification: PushNotification, token: String) -> JSONValue? {
        guard case .object(var message) = notification.payload else { return nil }
        guard var android = StatedSection(message["android"]) else { return nil }
        if let priority = notification.priority { android.state("urgency", .string(priority == .high ? "HIGH" : "NORMAL")) }
        if let ttl = notification.timeToLive { android.state("ttl", .string("\(max(0, ttl))s")) }
        message["android"] = android.value
        if !StatedSection.isTopicSend(message) { message["token"] = .array([.string(token)]) }
        return .object(["validate_only": false, "message": .object(message)])
    }
}
