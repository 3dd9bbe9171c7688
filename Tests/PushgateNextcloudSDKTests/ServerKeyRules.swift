/// The Nextcloud server's checks on registration input (nextcloud/notifications
/// `PushController::registerDevice`), written out independently of the SDK.
enum ServerKeyRules {
    /// `devicePublicKey` starts with `"-----BEGIN PUBLIC KEY-----\n"` and is either 450 bytes with
    /// `"\n-----END PUBLIC KEY-----"` first found at offset 425, or 451 bytes with
    /// `"\n-----END PUBLIC KEY-----\n"` first found at offset 425 (PHP `strlen` and `strpos`).
    static func acceptsDeviceKey(_ pem: String) -> Bool {
        let bytes = Array(pem.utf8)
        guard bytes.starts(with: Array("-----BEGIN PUBLIC KEY-----\n".utf8)) else { return false }
        if bytes.count == 450 { return Self.firstOffset(of: "\n-----END PUBLIC KEY-----", in: bytes) == 425 }
        if bytes.count == 451 { return Self.firstOffset(of: "\n-----END PUBLIC KEY-----\n", in: bytes) == 425 }
        return false
    }

    /// `pushTokenHash` matches `/^([a-f0-9]{128})$/`.
    static func acceptsPushTokenHash(_ hash: String) -> Bool {
        hash.utf8.count == 128 && hash.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// `proxyServer` is at most 256 bytes and matches
    /// `^(https\:\/\/|http\:\/\/(localhost|[a-z0-9\.-]*\.(internal|local))(\:\d{0,5})?\/)`.
    static func acceptsProxyServer(_ url: String) -> Bool {
        guard url.utf8.count <= 256 else { return false }
        return url.wholeMatch(of: /(https:\/\/|http:\/\/(localhost|[a-z0-9.-]*\.(internal|local))(:\d{0,5})?\/).*/) != nil
    }

    private static func firstOffset(of needle: String, in bytes: [UInt8]) -> Int? {
        let needle = Array(needle.utf8)
        guard bytes.count >= needle.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
