import PushgateCore

/// Builds the body of `messages:send` for one notification and one token:
/// `{"validate_only":false,"message": payload + token}`, with `android.urgency` from a stated priority and
/// `android.ttl` from a stated time to live when the payload does not set them; nothing the front end
/// left out is added (no `android` section unless the payload or a stated field makes one).
enum HMSMessage {
    static func body(notification: PushNotification, token: String) -> JSONValue? {
        guard case .object(var message) = notification.payload else { return nil }
        var android: [String: JSONValue]?
        switch message["android"] {
        case nil, .null?: android = nil
        case .object(let members)?: android = members
        case _?: return nil
        }
        func state(_ key: String, _ value: JSONValue) {
            var members = android ?? [:]
            if members[key] == nil { members[key] = value }
            android = members
        }
        if let priority = notification.priority { state("urgency", .string(priority == .high ? "HIGH" : "NORMAL")) }
        if let ttl = notification.timeToLive { state("ttl", .string("\(max(0, ttl))s")) }
        message["android"] = android.map(JSONValue.object)
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
