import PushgateConfig
import PushgateGorush
import PushgateStatusWire
import PushgateCore

/// The gorush `POST /api/push` body a status-go server sends for accepted notifications: one notification
/// per device, in the generation `payload_style` names.
///
/// - `legacy`: `tokens`, `platform` (APN_TOKEN 1, FIREBASE_TOKEN 2), `message`, `topic` (the
///   registration's `apn_topic`, for every platform) and `data` with `encryptedMessage`, `chatId` and
///   `publicKey` as `0x`-prefixed lowercase hex.
/// - `current`: the same, plus for APNs tokens `content_available: true`, `sound: "default"`,
///   `priority: "high"`, `push_type: "alert"` and a `deepLink` data key (`status-app://chats` for
///   messages, `status-app://contact-requests` for contact requests, `status-app://ac` otherwise).
struct StatusGorushRequest: Sendable {
    /// One accepted notification and the registration it goes to.
    struct Item: Sendable {
        let notification: Protobuf_PushNotification
        let registration: Protobuf_PushNotificationRegistration
    }

    let style: StatusSettings.PayloadStyle
    let texts: StatusSettings.Texts

    /// The JSON body, keys in status-go's order.
    func body(_ items: [Item]) -> [UInt8] {
        var text = "{\"notifications\":["
        for (index, item) in items.enumerated() {
            if index > 0 { text += "," }
            text += self.notification(item)
        }
        text += "]}"
        return Array(text.utf8)
    }

    private func notification(_ item: Item) -> String {
        let registration = item.registration
        let isAPNs = registration.tokenType == .apnToken
        let platform = isAPNs ? 1 : registration.tokenType == .firebaseToken ? 2 : 0
        var text = "{\"tokens\":[" + Self.quoted(registration.deviceToken) + "],\"platform\":\(platform)"
        text += ",\"message\":" + Self.quoted(self.text(for: item.notification.type))
        text += ",\"topic\":" + Self.quoted(registration.apnTopic)
        if self.style == .current && isAPNs {
            text += ",\"content_available\":true,\"sound\":\"default\",\"priority\":\"high\",\"push_type\":\"alert\""
        }
        text += ",\"data\":{\"encryptedMessage\":" + Self.quoted(Self.hex(item.notification.message))
        text += ",\"chatId\":" + Self.quoted(Self.hex(item.notification.chatID))
        text += ",\"publicKey\":" + Self.quoted(Self.hex(item.notification.publicKey))
        if self.style == .current && isAPNs {
            text += ",\"deepLink\":" + Self.quoted(Self.deepLink(for: item.notification.type))
        }
        return text + "}}"
    }

    private func text(for type: Protobuf_PushNotification.PushNotificationType) -> String {
        switch type {
        case .message: self.texts.message
        case .requestToJoinCommunity: self.texts.communityRequest
        case .contactRequest: self.texts.contactRequest
        default: self.texts.mention
        }
    }

    private static func deepLink(for type: Protobuf_PushNotification.PushNotificationType) -> String {
        switch type {
        case .message: "status-app://chats"
        case .contactRequest: "status-app://contact-requests"
        default: "status-app://ac"
        }
    }

    /// `0x` + lowercase hex, as status-go's JSON encodes bytes (`0x` alone when empty).
    static func hex(_ bytes: some Sequence<UInt8>) -> String { "0x" + Hex.lowercase(bytes) }

    /// A JSON string as Go's encoder writes it (HTML-sensitive characters escaped).
    static func quoted(_ text: String) -> String { GoJSON.string(text) }
}
