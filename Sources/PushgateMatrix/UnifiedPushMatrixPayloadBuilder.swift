import PushgateCore

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

    /// The bodies for one notify request, as JSON text (compact, keys sorted, as ``JSONText`` writes).
    public struct Bodies: Sendable, Equatable {
        /// What is sent first: the whole notification when it fits, else the `event_id_only` form.
        public var preferred: [UInt8]
        /// Whether ``preferred`` has members the `event_id_only` form leaves out. That form is built only
        /// when a push server refuses ``preferred``, which is rare.
        var hasFallback: Bool

        /// The `event_id_only` form, when it differs from ``preferred`` (sent when the push server refuses
        /// the whole notification, as one with a smaller limit than 4096 bytes would).
        public var fallback: [UInt8]? {
            self.fallbackValue.flatMap { try? JSONText.encode($0) }
        }

        /// ``fallback`` as a JSON value (what the outbox keeps as a queued notification's reduced payload).
        var fallbackValue: JSONValue? {
            guard self.hasFallback, case .object(let notification)? = (try? JSONParser.parse(self.preferred))?["notification"] else { return nil }
            return UnifiedPushMatrixPayloadBuilder.body(.object(UnifiedPushMatrixPayloadBuilder.eventIDOnly(notification)))
        }
    }

    /// The members the `event_id_only` form keeps, as literals a key read from the text is compared with.
    static let eventIDOnlyKeyLiterals: [StaticString] = ["event_id", "room_id", "prio", "counts"]
    /// The same members, as strings.
    static let eventIDOnlyKeys = Set(Self.eventIDOnlyKeyLiterals.map(\.description))

    /// The bodies for the notification of `requestBody` (a request ``MatrixRequestParser`` accepted).
    public static func bodies(requestBody: [UInt8]) -> Bodies {
        Self.bodiesAsRead(requestBody) ?? Self.bodiesAsBuilt(requestBody)
    }

    /// The bodies written while the request is read, without building the notification; nil when the
    /// notification holds what only `JSONEncoder` writes, or does not fit (the long way then builds both).
    static func bodiesAsRead(_ requestBody: [UInt8]) -> Bodies? {
        var text: [UInt8] = []
        var hasOtherMembers = false
        let written: Bool? = try? JSONParser.walk(requestBody) { parser throws(JSONParser.Failure) -> Bool in
            var written = true
            try parser.readMembers { parser, key throws(JSONParser.Failure) in
                guard key == "notification" else { return try parser.skipValue() }
                // The last `notification` wins, as a dictionary keeps the last of equal keys.
                text.removeAll(keepingCapacity: true)
                text.reserveCapacity(512)
                text.append(contentsOf: #"{"notification":"#.utf8)
                hasOtherMembers = false
                guard parser.nextKind == .object else {
                    text.append(contentsOf: "{}".utf8)
                    written = true
                    return try parser.skipValue()
                }
                written = try parser.readCanonicalObject(into: &text) { key in
                    if key == "devices" { return false }
                    if !Self.eventIDOnlyKeyLiterals.contains(where: { key == $0 }) { hasOtherMembers = true }
                    return true
                }
            }
            return written
        }
        guard written == true else { return nil }
        if text.isEmpty { text.append(contentsOf: #"{"notification":{}"#.utf8) }
        text.append(UInt8(ascii: "}"))
        guard text.count <= Self.maximumBodySize else { return nil }
        return Bodies(preferred: text, hasFallback: hasOtherMembers)
    }

    /// The bodies from the notification read into a value and written by ``JSONText``.
    static func bodiesAsBuilt(_ requestBody: [UInt8]) -> Bodies {
        let notification = Self.notificationWithoutDevices(requestBody)
        let hasOtherMembers = notification.keys.contains { !Self.eventIDOnlyKeys.contains($0) }
        if let full = try? JSONText.encode(Self.body(.object(notification))), full.count <= Self.maximumBodySize || !hasOtherMembers {
            return Bodies(preferred: full, hasFallback: hasOtherMembers)
        }
        let reduced = (try? JSONText.encode(Self.body(.object(Self.eventIDOnly(notification))))) ?? Array(#"{"notification":{}}"#.utf8)
        return Bodies(preferred: reduced, hasFallback: false)
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
