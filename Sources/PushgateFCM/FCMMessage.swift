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

    /// `{"message": fcm_options ⊕ payload, with the token}`, and in `android` the notification's stated
    /// priority, time to live and collapse id where the payload sets none; or nil when the payload is not
    /// a JSON object. Nothing the front end left out is added: no `android` section unless the payload,
    /// the app's `fcm_options` or a stated field makes one.
    static func body(options: [String: JSONValue], notification: PushNotification, token: String) -> JSONValue? {
        guard case .object = notification.payload else { return nil }
        guard case .object(var message) = JSONValue.object(options).merging(notification.payload) else { return nil }
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
        if let priority = notification.priority { state("priority", .string(priority == .high ? "HIGH" : "NORMAL")) }
        if let ttl = notification.timeToLive { state("ttl", .string("\(max(0, ttl))s")) }
        if let collapseID = notification.collapseID, !collapseID.isEmpty { state("collapse_key", .string(collapseID)) }
        message["android"] = android.map(JSONValue.object)
        // A topic or condition send (the front end put `topic` or `condition` in the payload) has no token.
        if Self.isTopicSend(message) { return .object(["message": .object(message)]) }
        message["token"] = .string(token)
        return .object(["message": .object(message)])
    }
}
