import PushgateCore

/// Builds the APNs body of a Matrix notification as Sygnal does, so iOS clients (their Notification
/// Service Extensions and localisation tables) receive exactly what they expect: the `loc-key` table,
/// the `event_id_only` shape, badge counts, `default_payload` merging, and truncation to 4096 bytes.
public enum APNsMatrixPayloadBuilder {
    /// The largest body APNs accepts for alert and background pushes.
    public static let maximumSize = 4096
    /// Longest sender or room name used in `loc-args`, in code points.
    static let maximumFieldLength = 1024

    /// Builds the body for one device.
    /// - Parameters:
    ///   - notification: the validated notification.
    ///   - device: the pusher.
    ///   - sendBadgeCounts: the app's `send_badge_counts`.
    public static func payload(for notification: MatrixNotification, device: MatrixDevice, sendBadgeCounts: Bool = true) -> MatrixPayload {
        var base: [String: JSONValue] = [:]
        switch device.defaultPayload {
        case nil, .null?: break
        case .object(let object)?: base = object
        default: return .reject(reason: "default_payload is not an object")
        }
        let body: JSONValue
        if let eventID = notification.eventID, notification.type == nil {
            body = Self.eventIDOnly(notification, eventID: eventID, base: base, sendBadgeCounts: sendBadgeCounts)
        } else {
            guard let full = Self.full(notification, base: base, sendBadgeCounts: sendBadgeCounts) else {
                return .skip(reason: "nothing to show and no badge")
            }
            body = full
        }
        // A body still too long once nothing is left to shorten goes out as it is: the APNs back end refuses
        // it (`PayloadTooLarge`), and the request answers 502 as Sygnal's does, rather than losing it silently.
        return .send(APNsPayloadTruncation.fit(body, maximumSize: Self.maximumSize) ?? body)
    }

    private static func eventIDOnly(_ notification: MatrixNotification, eventID: String, base: [String: JSONValue], sendBadgeCounts: Bool) -> JSONValue {
        var payload = base
        if let roomID = notification.roomID { payload["room_id"] = .string(roomID) }
        payload["event_id"] = .string(eventID)
        if sendBadgeCounts {
            if let unread = notification.unread { payload["unread_count"] = .number(Double(unread)) }
            if let missed = notification.missedCalls { payload["missed_calls"] = .number(Double(missed)) }
        }
        return .object(payload)
    }

    private static func full(_ notification: MatrixNotification, base: [String: JSONValue], sendBadgeCounts: Bool) -> JSONValue? {
        let alert = APNsLocalizedAlert.make(for: notification)
        var badge: Int?
        if sendBadgeCounts, notification.unread != nil || notification.missedCalls != nil {
            badge = (notification.unread ?? 0) + (notification.missedCalls ?? 0)
        }
        guard alert != nil || badge != nil else { return nil }
        // Badge-only updates (no type) ignore default_payload, as Sygnal's clients expect.
        var payload = notification.type != nil ? base : [:]
        // Room for the keys added below, so that no dictionary grows (rehashing) while they go in.
        payload.makeRoom(for: 3)
        var aps: [String: JSONValue] = [:]
        if case .object(let existing)? = payload["aps"] { aps = existing }
        aps.makeRoom(for: 2)
        if let alert {
            var alertObject: [String: JSONValue] = [:]
            if case .object(let existing)? = aps["alert"] { alertObject = existing }
            alertObject.makeRoom(for: 2)
            alertObject["loc-key"] = .string(alert.key)
            alertObject["loc-args"] = .array(alert.arguments.map(JSONValue.string))
            aps["alert"] = .object(alertObject)
        }
        if let badge { aps["badge"] = .number(Double(badge)) }
        payload["aps"] = .object(aps)
        if alert != nil {
            if let roomID = notification.roomID { payload["room_id"] = .string(roomID) }
            if let eventID = notification.eventID { payload["event_id"] = .string(eventID) }
        }
        return .object(payload)
    }
}
