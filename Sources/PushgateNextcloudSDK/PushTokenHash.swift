import Crypto
import Foundation

/// The `pushTokenHash` the Nextcloud server wants at registration: the lowercase hexadecimal SHA-512 of
/// the push token's UTF-8 bytes.
///
/// Hash exactly the string that is later sent to the proxy as `pushToken` (for Nextcloud Talk on iOS that
/// is `"<APNs token hex> <PushKit token hex>"`, one space between): the proxy matches notifications to
/// devices with it.
///
/// - Parameter token: the push token, as sent to the proxy.
/// - Returns: 128 lowercase hexadecimal characters.
public func pushTokenHash(_ token: String) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var hex: [UInt8] = []
    hex.reserveCapacity(128)
    for byte in SHA512.hash(data: Data(token.utf8)) {
        hex.append(digits[Int(byte >> 4)])
        hex.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: hex, as: UTF8.self)
}
