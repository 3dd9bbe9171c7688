import Crypto
import Foundation
import PushgateCore
import PushgateProviderSupport

/// The RFC 8030 headers derived from a notification: `TTL`, `Urgency` and `Topic`.
enum WebPushHeaders {
    /// `high` for high priority; for normal priority `low` when the notification is a background one,
    /// `normal` otherwise.
    static func urgency(for notification: PushNotification) -> String {
        switch (notification.priority, notification.kind) {
        case (.high, _): "high"
        case (.normal, .background): "low"
        case (.normal, .alert), (.normal, .voip): "normal"
        }
    }

    /// The `Topic` for a collapse id: the id itself when it is at most 32 characters of the base64url
    /// alphabet, otherwise the base64url of the first 24 bytes of its SHA-256 (32 characters).
    static func topic(forCollapseID collapseID: String) -> String {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        if !collapseID.isEmpty, collapseID.count <= 32, collapseID.allSatisfy(alphabet.contains) {
            return collapseID
        }
        return Base64URL.encode(SHA256.hash(data: Data(collapseID.utf8)).prefix(24))
    }
}
