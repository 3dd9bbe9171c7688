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
        /// The `event_id_only` form, when it differs from ``preferred`` (sent when the push server refuses
        /// the whole notification, as one with a smaller limit than 4096 bytes would).
        public var fallback: JSONValue?
    }

    /// The bodies for the notification of `requestBody` (a request ``MatrixRequestParser`` accepted).
    public static func bodies(requestBody: [UInt8]) -> Bodies {
        var notification: [String: JSONValue] = [:]
        if case .object(let root)? = try? JSONParser.parse(requestBody), case .object(let object)? = root["notification"] {
            notification = object
        }
        notification["devices"] = nil
        let full = JSONValue.object(["notification": .object(notification)])
        let reduced = JSONValue.object(["notification": .object(Self.eventIDOnly(notification))])
        guard full != reduced else { return Bodies(preferred: full, fallback: nil) }
        let fullSize = (try? JSONText.encodedCount(full)) ?? Int.max
        if fullSize <= Self.maximumBodySize { return Bodies(preferred: full, fallback: reduced) }
        return Bodies(preferred: reduced, fallback: nil)
    }

    /// The members of the `event_id_only` form: the ids, the counts and the priority.
    static func eventIDOnly(_ notification: [String: JSONValue]) -> [String: JSONValue] {
        var reduced: [String: JSONValue] = [:]
        for key in ["event_id", "room_id", "prio", "counts"] {
            if let value = notification[key] { reduced[key] = value }
        }
        return reduced
    }
}
