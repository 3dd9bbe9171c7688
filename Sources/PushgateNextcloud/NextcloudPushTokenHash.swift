import Crypto

/// The `pushTokenHash` a Nextcloud server keeps for a device: lowercase hex SHA-512 of the push token.
enum NextcloudPushTokenHash {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The hash of `token` as the device sent it to its server.
    static func of(_ token: String) -> String {
        var hex: [UInt8] = []
        hex.reserveCapacity(128)
        for byte in SHA512.hash(data: Array(token.utf8)) {
            hex.append(Self.digits[Int(byte >> 4)])
            hex.append(Self.digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
