public import PushgateCore

/// Builds the body a UnifiedPush endpoint receives for a Matrix notification, as the common-proxies
/// gateway forwards it: `{"notification": …}` with the notification exactly as the homeserver sent it but
/// for `devices` (the pushers' app ids, pushkeys and `data`, such as Element X's `cs` secret, stay with
/// the gateway). Clients read only `notification.*` (event id, room id, counts, prio).
///
/// A body longer than UnifiedPush's 4096 bytes is replaced by the `event_id_only` form (`event_id`,
/// `room_id`, `prio` and `counts` only), which a client turns into a notification by fetching the event,
/// rather than refused.
public enum UnifiedPushMatrixPayloadBuilder {
    /// The largest body a UnifiedPush endpoint takes.
    public static let maximumBodySize = 4096

    /// The bodies for one notify request.
    public struct Bodies: Sendable, Equatable {
        /// What is sent first: the whole notification when it fits, else the `event_id_only` form.
        public var preferred: JSONValue
        /// The notification whose `event_id_only` form is ``fallback``; nil when there is no fallback. The
        /// form itself is built only when a push server refuses ``preferred``, which is rare.
        var reducible: [String: JSONValue]?

        /// The `event_id_only` form, when it differs from ``preferred`` (sent when the push server refuses
        /// the whole notification, as one with a smaller limit than 4096 bytes would).
        public var fallback: JSONValue? {
            self.reducible.map { UnifiedPushMatrixPayloadBuilder.body(.object(UnifiedPushMatrixPayloadBuilder.eventIDOnly($0))) }
        }
    }

    /// The members the `event_id_only` form keeps.
    static let eventIDOnlyKeys: Set<String> = ["event_id", "room_id", "prio", "counts"]

    /// The bodies for the notification of `requestBody` (a request ``MatrixRequestParser`` accepted).
    public static func bodies(requestBody: [UInt8]) -> Bodies {
        let notification = Self.notificationWithoutDevices(requestBody)
        let full = Self.body(.object(notification))
        // The `event_id_only` form is the same as the whole one unless the notification has other members.
        guard notification.keys.contains(where: { !Self.eventIDOnlyKeys.contains($0) }) else { return Bodies(preferred: full, reducible: nil) }
        let fullSize = (try? JSONText.encodedCount(full)) ?? Int.max
        if fullSize <= Self.maximumBodySize { return Bodies(preferred: full, reducible: notification) }
        return Bodies(preferred: Self.body(.object(Self.eventIDOnly(notification))), reducible: nil)
    }

    /// `{"notification": notification}`.
    static func body(_ notification: JSONValue) -> JSONValue {
        .object(["notification": notification])
    }

    /// The members of the request's `notification` object (the last one, when the key repeats) but for
    /// `devices`, which is read past rather than built; none when there is no such object.
    static func notificationWithoutDevices(_ requestBody: [UInt8]) -> [String: JSONValue] {
        var notification: [String: JSONValue] = [:]
        let read: Void? = try? JSONParser.walk(requestBody) { parser throws(JSONParser.Failure) in
            try parser.readMembers { parser, key throws(JSONParser.Failure) in
                guard key == "notification" else { return try parser.skipValue() }
                notification = [:]
                guard parser.nextKind == .object else { return try parser.skipValue() }
                try parser.readMembers { parser, key throws(JSONParser.Failure) in
                    if key == "devices" {
                        try parser.skipValue()
                    } else {
                        notification[key.string] = try parser.readValue()
                    }
                }
            }
        }
        return read == nil ? [:] : notification
    }

    /// The members of the `event_id_only` form: the ids, the counts and the priority.
    static func eventIDOnly(_ notification: [String: JSONValue]) -> [String: JSONValue] {
        notification.filter { Self.eventIDOnlyKeys.contains($0.key) }
    }
}
