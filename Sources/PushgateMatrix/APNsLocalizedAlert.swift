import PushgateCore

/// The `loc-key` and `loc-args` of a Matrix event, from Sygnal's table.
struct APNsLocalizedAlert: Equatable {
    let key: String
    let arguments: [String]

    static func make(for notification: MatrixNotification) -> APNsLocalizedAlert? {
        guard let type = MatrixText.nonEmpty(notification.type) else { return nil }
        let from = MatrixText.prefix(
            MatrixText.nonEmpty(notification.senderDisplayName) ?? MatrixText.nonEmpty(notification.sender) ?? " ",
            codePoints: APNsMatrixPayloadBuilder.maximumFieldLength
        )
        let room = (MatrixText.nonEmpty(notification.roomName) ?? MatrixText.nonEmpty(notification.roomAlias))
            .map { MatrixText.prefix($0, codePoints: APNsMatrixPayloadBuilder.maximumFieldLength) }
        switch type {
        case "m.room.message", "m.room.encrypted":
            return Self.message(notification, from: from, room: room)
        case "m.call.invite":
            let sdp = notification.content?["offer"]?["sdp"]?.stringValue ?? ""
            return APNsLocalizedAlert(key: sdp.contains("m=video") ? "VIDEO_CALL_FROM_USER" : "VOICE_CALL_FROM_USER", arguments: [from])
        case "m.room.member":
            guard notification.userIsTarget == true, notification.membership == "invite" else { return nil }
            if let room { return APNsLocalizedAlert(key: "USER_INVITE_TO_NAMED_ROOM", arguments: [from, room]) }
            return APNsLocalizedAlert(key: "USER_INVITE_TO_CHAT", arguments: [from])
        default:
            return APNsLocalizedAlert(key: "MSG_FROM_USER", arguments: [from])
        }
    }

    private static func message(_ notification: MatrixNotification, from: String, room: String?) -> APNsLocalizedAlert {
        let msgtype = notification.content?["msgtype"]?.stringValue
        let body = notification.content?["body"].flatMap(Self.text)
        // An empty body is no content, as Sygnal tests it (Python's truthiness), but for an image, whose
        // key Sygnal picks by `msgtype` alone.
        guard let msgtype, let body, !body.isEmpty || msgtype == "m.image" else {
            if let room { return APNsLocalizedAlert(key: "MSG_FROM_USER_IN_ROOM", arguments: [from, room]) }
            return APNsLocalizedAlert(key: "MSG_FROM_USER", arguments: [from])
        }
        switch (msgtype, room) {
        case ("m.image", let room?): return APNsLocalizedAlert(key: "IMAGE_FROM_USER_IN_ROOM", arguments: [from, body, room])
        case ("m.emote", let room?): return APNsLocalizedAlert(key: "ACTION_FROM_USER_IN_ROOM", arguments: [room, from, body])
        case (_, let room?): return APNsLocalizedAlert(key: "MSG_FROM_USER_IN_ROOM_WITH_CONTENT", arguments: [from, room, body])
        case ("m.image", nil): return APNsLocalizedAlert(key: "IMAGE_FROM_USER", arguments: [from, body])
        case ("m.emote", nil): return APNsLocalizedAlert(key: "ACTION_FROM_USER", arguments: [from, body])
        case (_, nil): return APNsLocalizedAlert(key: "MSG_FROM_USER_WITH_CONTENT", arguments: [from, body])
        }
    }

    private static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .null: nil
        default: (try? value.encoded()).map { String(decoding: $0, as: UTF8.self) }
        }
    }
}
