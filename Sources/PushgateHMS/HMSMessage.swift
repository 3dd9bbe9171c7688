import PushgateCore

/// Builds the body of `messages:send` for one notification and one token:
/// `{"validate_only":false,"message": payload + token}`, with `android.urgency` from the priority and
/// `android.ttl` from the time to live when the payload does not set them.
enum HMSMessage {
    static func body(notification: PushNotification, token: String) -> JSONValue? {
        guard case .object(var message) = notification.payload else { return nil }
        var android: [String: JSONValue]
        switch message["android"] {
        case nil, .null?: android = [:]
        case .object(let members)?: android = members
        case _?: return nil
        }
        if android["urgency"] == nil { android["urgency"] = .string(notification.priority == .high ? "HIGH" : "NORMAL") }
        if android["ttl"] == nil, let ttl = notification.timeToLive { android["ttl"] = .string("\(max(0, ttl))s") }
        message["android"] = .object(android)
        if !Self.isTopicSend(message) { message["token"] = .array([.string(token)]) }
        return .object(["validate_only": false, "message": .object(message)])
    }

    /// Whether the payload names a topic or condition instead of tokens.
    static func isTopicSend(_ message: [String: JSONValue]) -> Bool {
        for key in ["topic", "condition"] {
            if case .string(let value)? = message[key], !value.isEmpty { return true }
        }
        return false
    }
}
