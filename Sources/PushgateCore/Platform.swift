/// The push providers Pushgate delivers through.
public enum Platform: String, Sendable, Hashable, CaseIterable, Codable {
    /// Apple Push Notification service (HTTP/2).
    case apns
    /// Firebase Cloud Messaging, HTTP v1 API.
    case fcm
    /// Web Push (RFC 8030, 8291, 8292).
    case webPush = "webpush"
}
