import PushgateCore

/// Builds the FCM HTTP v1 `message` (without its token) for a Matrix notification as Sygnal's v1 mode
/// does: a data-only message whose values are all strings, event fields copied and cut to 1024 bytes,
/// `content` flattened to `content_<key>`, counts as strings, `prio`, and `android.priority`.
///
/// Unlike Sygnal 0.17, a badge-clearing update (`unread: 0`) is sent, so badges clear on Android too.
public enum FCMMatrixPayloadBuilder {
    /// Longest string value in `data`, in UTF-8 bytes (longer ones end in `…`).
    static let maximumFieldSize = 1024
    /// Builds the message for one device.
    public static func payload(for notification: MatrixNotification, device: MatrixDevice, sendBadgeCounts: Bool = true) -> MatrixPayload {
        var data: [String: String] = [:]
        switch device.defaultPayload {
        case nil, .null?: break
        case .object(let object)?:
            for (key, value) in object { data[key] = Self.string(value) }
        default: return .reject(reason: "default_payload is not an object")
        }
        // The event's fields, in Sygnal's order (a later one wins over a `default_payload` key or an
        // earlier field of the same name): written one by one, without a dictionary of them first.
        func copy(_ key: String, _ value: String?) {
            if let value { data[key] = MatrixText.truncated(value, utf8Bytes: Self.maximumFieldSize) }
        }
        copy("event_id", notification.eventID)
        copy("type", notification.type)
        copy("sender", notification.sender)
        copy("room_name", notification.roomName)
        copy("room_alias", notification.roomAlias)
        copy("membership", notification.membership)
        copy("sender_display_name", notification.senderDisplayName)
        for (key, value) in notification.content ?? [:] {
            if case .string(let text) = value { copy("content_\(key)", text) }
        }
        copy("room_id", notification.roomID)
        data["prio"] = notification.isLowPriority ? "normal" : "high"
        var hasCounts = false
        if sendBadgeCounts {
            if let unread = notification.unread {
                data["unread"] = String(unread)
                hasCounts = true
            }
            if let missed = notification.missedCalls {
                data["missed_calls"] = String(missed)
                hasCounts = true
            }
        }
        guard notification.roomID != nil || notification.eventID != nil || hasCounts else {
            return .skip(reason: "no room, event or counts to send")
        }
        return .send(
            .object([
                "data": .object(data.mapValues(JSONValue.string)),
                "android": .object(["priority": .string(notification.isLowPriority ? "normal" : "high")]),
            ])
        )
    }

    /// FCM `data` values must be strings: other JSON values are sent as their JSON text.
    private static func string(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): text
        default: (try? value.encoded()).map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
    }
}
