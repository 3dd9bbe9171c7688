import PushgateCore

/// Builds the body of `messages:send` for one notification and one registration token.
enum FCMMessage {
    /// Whether a message goes to a topic or condition rather than to a token.
    static func isTopicSend(_ message: [String: JSONValue]) -> Bool {
        for key in ["topic", "condition"] {
            if case .string(let value)? = message[key], !value.isEmpty { return true }
        }
        return false
    }

    /// `{"message": fcm_options ⊕ payload, with android priority/ttl/collapse_key and the token}`, or nil
    /// when the payload is not a JSON object.
    static func body(options: [String: JSONValue], notification: PushNotification, token: String) -> JSONValue? {
        guard case .object = notification.payload else { return nil }
        guard case .object(var message) = JSONValue.object(options).merging(notification.payload) else { return nil }
        var android: [String: JSONValue]
        switch message["android"] {
        case nil, .null?: android = [:]
        case .object(let members)?: android = members
        case _?: return nil
        }
        if android["priority"] == nil {
            android["priority"] = .string(notification.priority == .high ? "HIGH" : "NORMAL")
        }
        if android["ttl"] == nil, let ttl = notification.timeToLive {
            android["ttl"] = .string("\(max(0, ttl))s")
        }
        if android["collapse_key"] == nil, let collapseID = notification.collapseID {
            android["collapse_key"] = .string(collapseID)
        }
        message["android"] = .object(android)
        // A topic or condition send (the front end put `topic` or `condition` in the payload) has no token.
        if Self.isTopicSend(message) { return .object(["message": .object(message)]) }
        message["token"] = .string(token)
        return .object(["message": .object(message)])
    }
}
