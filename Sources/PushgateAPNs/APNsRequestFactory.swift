public import Foundation
public import PushgateCore

/// Builds the `apns-*` headers of one notification: what its front end stated, and the app's topic.
/// (Sygnal's per-app `push_type` is the Matrix front end's: it states it on its notifications.)
public struct APNsRequestFactory: Sendable {
    /// The app's topic (bundle id).
    public var topic: String

    /// Creates a factory.
    public init(topic: String) {
        self.topic = topic
    }

    /// The `apns-push-type` of a notification: the one its front end chose, else the one of its kind.
    public func pushType(for notification: PushNotification) -> String {
        notification.apnsPushType ?? self.pushType(for: notification.kind)
    }

    /// The `apns-push-type` for a notification kind.
    public func pushType(for kind: PushKind) -> String {
        switch kind {
        case .alert: APNsPushType.alert.rawValue
        case .background: APNsPushType.background.rawValue
        case .voip: APNsPushType.voip.rawValue
        }
    }

    /// The `apns-topic` of a notification: the one its front end chose, else the app's (see
    /// ``topic(for:)-(PushKind)``).
    public func topic(for notification: PushNotification) -> String {
        notification.apnsTopic ?? self.topic(for: notification.kind)
    }

    /// The `apns-topic`: the app's topic, with `.voip` appended for VoIP pushes.
    public func topic(for kind: PushKind) -> String {
        guard kind == .voip, !self.topic.hasSuffix(".voip") else { return self.topic }
        return self.topic + ".voip"
    }

    /// The `apns-priority`: 10 for a stated high priority, 5 for normal; background pushes are always 5, as
    /// APNs requires. Nil (no header, APNs' default 10) when the front end stated no priority.
    public func priority(for notification: PushNotification) -> String? {
        if self.pushType(for: notification) == APNsPushType.background.rawValue { return "5" }
        switch notification.priority {
        case .high?: return "10"
        case .normal?: return "5"
        case nil: return nil
        }
    }

    /// Every `apns-*` header of the request, in a fixed order (without `authorization`).
    /// - Parameters:
    ///   - notification: the notification.
    ///   - apnsID: the request id (a new UUID per attempt).
    ///   - now: the time `apns-expiration` counts from.
    public func headers(for notification: PushNotification, apnsID: UUID, now: Date) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [
            ("apns-topic", self.topic(for: notification)),
            ("apns-push-type", self.pushType(for: notification)),
        ]
        if let priority = self.priority(for: notification) { headers.append(("apns-priority", priority)) }
        headers.append(("apns-id", notification.apnsID ?? apnsID.lowercaseText))
        if let expiration = notification.expiration {
            headers.append(("apns-expiration", String(max(0, expiration))))
        } else if let timeToLive = notification.timeToLive {
            // Saturating: a time to live read back from the outbox may be as large as Int allows.
            let expiration = Int64(now.timeIntervalSince1970.rounded(.down)).addingReportingOverflow(Int64(max(0, timeToLive)))
            let seconds = expiration.overflow ? Int64.max : expiration.partialValue
            headers.append(("apns-expiration", String(seconds)))
        }
        if let collapseID = notification.collapseID, !collapseID.isEmpty {
            headers.append(("apns-collapse-id", collapseID))
        }
        return headers
    }

    /// Why a notification cannot be sent at all, or nil when it can. Where APNs would refuse it, the text
    /// starts with APNs' reason (`PayloadTooLarge`, `BadCollapseId`, `InvalidPushType`, `BadMessageId`)
    /// and explains after a colon.
    /// - Parameter body: the encoded payload.
    public func problem(with notification: PushNotification, body: [UInt8]) -> String? {
        // By the push type sent: a VoIP app's alerts (`push_type: voip`) and a sender's `voip` too.
        let limit = self.pushType(for: notification) == APNsPushType.voip.rawValue ? APNs.maximumVoIPPayloadSize : APNs.maximumPayloadSize
        if body.count > limit {
            return "PayloadTooLarge: \(body.count) bytes, APNs accepts \(limit)"
        }
        if let collapseID = notification.collapseID {
            if collapseID.utf8.count > APNs.maximumCollapseIDSize { return "BadCollapseId: collapse id longer than \(APNs.maximumCollapseIDSize) bytes" }
            if !Self.isValidFieldValue(collapseID) { return "collapse id is not a valid HTTP/2 header value" }
        }
        if let pushType = notification.apnsPushType, APNsPushType(rawValue: pushType) == nil {
            return "InvalidPushType: apns-push-type \(pushType) is not one APNs defines"
        }
        if let topic = notification.apnsTopic {
            if topic != self.topic, !topic.hasPrefix(self.topic + ".") { return "apns-topic \(topic) is not this app's topic \(self.topic) or a suffix of it" }
            if !Self.isValidFieldValue(topic) { return "apns-topic is not a valid HTTP/2 header value" }
        }
        if let apnsID = notification.apnsID, UUID(uuidString: apnsID) == nil {
            return "BadMessageId: apns-id \(apnsID) is not a UUID"
        }
        return nil
    }

    /// Whether `value` may be sent as an HTTP/2 field value (RFC 9113 §8.2.1): no NUL, CR or LF, and no
    /// space or tab at either end. The values a front end chooses (topic, collapse id) are checked here, so
    /// the connection's HTTP/2 handler does not check every header block again (see ``APNsConnection``).
    static func isValidFieldValue(_ value: String) -> Bool {
        var value = value
        // Over the contiguous bytes, as `APNsProvider.isSafePathSegment` reads a token: walking `utf8` index
        // by index checks each index it steps over.
        return value.withUTF8 { bytes in
            if let first = bytes.first, first == 0x20 || first == 0x09 { return false }
            if let last = bytes.last, last == 0x20 || last == 0x09 { return false }
            return !bytes.contains { $0 == 0x00 || $0 == 0x0A || $0 == 0x0D }
        }
    }
}
