import PushgateCore

/// Builds the FCM HTTP v1 `message` (without its token) for a Matrix notification as Sygnal's v1 mode
/// does: a data-only message whose values are all strings, event fields copied and cut to 1024 bytes,
/// `content` flattened to `content_<key>`, counts as strings, `prio`, and `android.priority`.
///
/// Unlike Sygnal 0.17, a badge-clearing update (`unread: 0`) is sent, so badges clear on Android too.
public enum FCMMatrixPayloadBuilder {
    /// Longest string value in `data`, in UTF-8 bytes (longer ones end in `…`).
    static let maximumFieldSize = 1024
    /// Event fields copied into `data`, in Sygnal's order.
    static let copiedFields = ["event_id", "type", "sender", "room_name", "room_alias", "membership", "sender_display_name", "content", "room_id"]

    /// Builds the message for one device.
    public static func payload(for notification: MatrixNotification, device: MatrixDevice, sendBadgeCounts: Bool = true) -> MatrixPayload {
        var data: [String: String] = [:]
        switch device.defaultPayload {
        case nil, .null?: break
        case .object(let object)?:
            for (key, value) in object { data[key] = Self.string(value) }
        default: return .reject(reason: "default_payload is not an object")
        }
        let fields: [String: String?] = [
            "event_id": notification.eventID, "type": notification.type, "sender": notification.sender,
            "room_name": notification.roomName, "room_alias": notification.roomAlias, "membership": notification.membership,
            "sender_display_name": notification.senderDisplayName, "room_id": notification.roomID,
        ]
        for field in Self.copiedFields {
            if field == "content" {
                for (key, value) in notification.content ?? [:] {
                    if case .string(let text) = value { data["content_\(key)"] = MatrixText.truncated(text, utf8Bytes: Self.maximumFieldSize) }
                }
            } else if let value = fields[field] ?? nil {
                data[field] = MatrixText.truncated(value, utf8Bytes: Self.maximumFieldSize)
            }
        }
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
