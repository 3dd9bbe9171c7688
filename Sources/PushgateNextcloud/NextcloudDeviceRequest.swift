import Foundation

/// The fields of a `/devices` request, checked: a 64-byte identifier, its signature by the user key, and
/// (for registration) a push token.
struct NextcloudDeviceRequest: Sendable {
    /// The `deviceIdentifier` as sent (base64 of a SHA-512 digest).
    let deviceIdentifier: String
    /// The `userPublicKey`, SPKI PEM.
    let userPublicKey: String
    /// The `pushToken`, exactly as sent (its SHA-512 is what servers send as `pushTokenHash`).
    let pushToken: String?
    /// The optional `cloudId` (`user@server`) that lets a new key prove it owns the identifier.
    let cloudID: String?
    /// The app's User-Agent as Android Files sends it, in a form field (`http.useragent`; its header is
    /// its HTTP library's).
    let userAgentField: String?

    /// Why a request is malformed.
    struct Malformed: Error {
        let reason: String
    }

    /// Checks the fields; for registration the push token is required.
    /// The longest `pushToken` taken (FCM's tokens run to about 200 bytes, a UnifiedPush endpoint URL to a
    /// few hundred).
    static let maximumPushTokenLength = 1_024

    init(fields: [String: String], requirePushToken: Bool) throws(Malformed) {
        // Form decoding turned any unescaped '+' into a space; base64 has no spaces, so map them back.
        guard let identifier = fields["deviceIdentifier"]?.replacingOccurrences(of: " ", with: "+"),
            let digest = Data(base64Encoded: identifier), digest.count == 64
        else { throw Malformed(reason: "deviceIdentifier must be base64 of 64 bytes") }
        guard let signatureText = fields["deviceIdentifierSignature"]?.replacingOccurrences(of: " ", with: "+"),
            let signature = Data(base64Encoded: signatureText)
        else { throw Malformed(reason: "deviceIdentifierSignature must be base64") }
        guard let key = fields["userPublicKey"], key.contains("-----BEGIN PUBLIC KEY-----") else {
            throw Malformed(reason: "userPublicKey must be an SPKI PEM public key")
        }
        guard PrehashedRSASignature.isValid(signature: Array(signature), digest: Array(digest), publicKeyPEM: key) else {
            throw Malformed(reason: "the signature does not match the device identifier and key")
        }
        let token = fields["pushToken"]
        if requirePushToken, token?.isEmpty ?? true { throw Malformed(reason: "pushToken is required") }
        // No provider's token is longer or holds a control character; a NUL is refused by PostgreSQL's
        // text, and a token longer than its index's rows allow made the store fail (a 503, retried).
        if let token, token.utf8.count > Self.maximumPushTokenLength || token.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw Malformed(reason: "pushToken must be at most \(Self.maximumPushTokenLength) bytes without control characters")
        }
        self.deviceIdentifier = identifier
        self.userPublicKey = key
        self.pushToken = token
        self.cloudID = fields["cloudId"].flatMap { $0.isEmpty ? nil : $0 }
        self.userAgentField = fields["http.useragent"].flatMap { $0.isEmpty ? nil : String($0.prefix(512)) }
    }
}
