import Crypto
import PushgateCore

/// The `pushTokenHash` a Nextcloud server keeps for a device: lowercase hex SHA-512 of the push token.
enum NextcloudPushTokenHash {
    /// The hash of `token` as the device sent it to its server.
    static func of(_ token: String) -> String {
        Hex.lowercase(SHA512.hash(data: Array(token.utf8)))
    }
}
