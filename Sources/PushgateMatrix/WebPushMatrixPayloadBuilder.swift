import Foundation
public import PushgateCore

/// Builds the Web Push message for a Matrix notification as Sygnal does: the subscription from the
/// pusher (`pushkey` = p256dh, `data.endpoint`, `data.auth`), the JSON the service worker receives, and
/// Sygnal's `Urgency` and `Topic` headers.
public enum WebPushMatrixPayloadBuilder {
    /// What to send for one device.
    public struct Message: Sendable, Equatable {
        /// The subscription JSON the Web Push back end takes as the token.
        public var subscription: String
        /// The plaintext JSON.
        public var payload: JSONValue
        /// The Topic for `only_last_per_room` pushers (a hash of the room id), if any.
        public var topic: String?
        /// The Urgency: `low` for `prio: low`, `normal` otherwise (RFC 8030 lists chat messages under
        /// `normal`; `high` is for calls), as Sygnal sends it.
        public var urgency: WebPushUrgency
        /// The payload without `content`, when the content is long enough that the whole may be over Web
        /// Push's 3993 bytes: the back end sends it then (the client fetches the event), where Sygnal's
        /// would be refused by the push service. Nil for a short content.
        public var reducedPayload: JSONValue?
    }

    /// Content strings of more bytes than this make a reduced payload worth stating (the other fields of a
    /// notification are short: room and display names, ids).
    static let longContentBytes = 1_024

    /// The longest `data.endpoint` taken, in bytes.
    static let maximumEndpointLength = 2_048
    /// The longest `data.auth` taken, in bytes.
    static let maximumAuthLength = 256

    /// The subscription of a pusher, or why it cannot be used.
    public static func subscription(for device: MatrixDevice) -> Result<String, MatrixPayloadRefusal> {
        guard let data = device.data else { return .failure(MatrixPayloadRefusal(reason: "pusher data is missing")) }
        guard let endpoint = data["endpoint"]?.stringValue, let auth = data["auth"]?.stringValue, !device.pushkey.isEmpty else {
            return .failure(MatrixPayloadRefusal(reason: "pusher data lacks endpoint or auth"))
        }
        // Push services' endpoints are a few hundred bytes and an auth secret 22 characters; longer ones are
        // not theirs, and each would be kept in the subscription cache.
        guard endpoint.utf8.count <= Self.maximumEndpointLength, auth.utf8.count <= Self.maximumAuthLength else {
            return .failure(MatrixPayloadRefusal(reason: "pusher data's endpoint or auth is too long"))
        }
        // `{"endpoint":…,"keys":{"auth":…,"p256dh":…}}`: the members in sorted order, the text `JSONText`
        // writes for the same object, without building the dictionaries.
        var keys = JSONText.ObjectWriter(capacity: auth.utf8.count + device.pushkey.utf8.count + 24)
        keys.add("auth", auth)
        keys.add("p256dh", device.pushkey)
        var subscription = JSONText.ObjectWriter(capacity: endpoint.utf8.count + auth.utf8.count + device.pushkey.utf8.count + 48)
        subscription.add("endpoint", endpoint)
        subscription.add("keys", keys)
        return .success(String(decoding: subscription.finish(), as: UTF8.self))
    }

    /// Builds the message for one device.
    public static func message(for notification: MatrixNotification, device: MatrixDevice) -> Result<Message, MatrixPayloadRefusal>? {
        if device.data?["events_only"] == .bool(true), notification.eventID == nil { return nil }
        let subscription: String
        switch Self.subscription(for: device) {
        case .success(let value): subscription = value
        case .failure(let refusal): return .failure(refusal)
        }
        var payload: [String: JSONValue] = [:]
        if case .object(let object)? = device.defaultPayload { payload = object }
        // Room for every field below, so that the object does not grow (rehashing) three times on the way.
        payload.makeRoom(for: 12)
        // The fields copied when truthy, in Sygnal's order.
        let fields: [(key: String, value: JSONValue?)] = [
            ("room_id", notification.roomID.map(JSONValue.string)), ("room_name", notification.roomName.map(JSONValue.string)),
            ("room_alias", notification.roomAlias.map(JSONValue.string)), ("membership", notification.membership.map(JSONValue.string)),
            ("event_id", notification.eventID.map(JSONValue.string)), ("sender", notification.sender.map(JSONValue.string)),
            ("sender_display_name", notification.senderDisplayName.map(JSONValue.string)),
            ("user_is_target", notification.userIsTarget.map(JSONValue.bool)), ("type", notification.type.map(JSONValue.string)),
        ]
        for field in fields {
            if let value = field.value, Self.isTruthy(value) { payload[field.key] = value }
        }
        if let unread = notification.unread { payload["unread"] = .number(Double(unread)) }
        if let missed = notification.missedCalls { payload["missed_calls"] = .number(Double(missed)) }
        var reducedPayload: JSONValue?
        if var content = notification.content {
            content["formatted_body"] = nil
            // Lengths in code points, as Sygnal's Python counts them (not Swift's grapheme clusters, of
            // which a body in Thai, Devanagari or emoji has far fewer than code points).
            if case .string(let body)? = content["body"], body.unicodeScalars.count > 1000 {
                content["body"] = .string(String(String.UnicodeScalarView(body.unicodeScalars.prefix(999))) + "…")
            }
            if case .string(let ciphertext)? = content["ciphertext"], ciphertext.unicodeScalars.count > 2000 {
                content["ciphertext"] = nil
            }
            let contentBytes = content.values.reduce(0) { total, value in total + (value.stringValue?.utf8.count ?? 0) }
            if contentBytes > Self.longContentBytes { reducedPayload = .object(payload) }
            payload["content"] = .object(content)
        }
        var topic: String?
        if device.data?["only_last_per_room"] == .bool(true), let roomID = notification.roomID {
            topic = WebPushRoomTopic.topic(forRoom: roomID)
        }
        let urgency: WebPushUrgency = notification.isLowPriority ? .low : .normal
        return .success(Message(subscription: subscription, payload: .object(payload), topic: topic, urgency: urgency, reducedPayload: reducedPayload))
    }

    private static func isTruthy(_ value: JSONValue) -> Bool {
        switch value {
        case .null: false
        case .bool(let flag): flag
        case .string(let text): !text.isEmpty
        case .number(let number): number != 0
        case .array(let values): !values.isEmpty
        case .object(let members): !members.isEmpty
        }
    }
}

/// Why a pusher cannot be delivered to (its pushkey is rejected).
public struct MatrixPayloadRefusal: Error, Sendable, Equatable {
    /// The explanation, for logs.
    public let reason: String
}
