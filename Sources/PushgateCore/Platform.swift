/// The push providers Pushgate delivers through.
public enum Platform: String, Sendable, Hashable, CaseIterable, Codable {
    /// Apple Push Notification service (HTTP/2).
    case apns
    /// Firebase Cloud Messaging, HTTP v1 API.
    case fcm
    /// Web Push (RFC 8030, 8291, 8292).
    case webPush = "webpush"
    /// Huawei Push Kit (HMS).
    case hms
    /// UnifiedPush: a POST to the device's endpoint URL at its distributor's push server.
    case unifiedPush = "unifiedpush"
    /// A JSON POST to a URL the operator configured (a front end's feedback to its senders), not a
    /// device provider.
    case webhook
}
