/// Why an incoming push was dropped.
///
/// No case carries key material or the decrypted text.
public enum NextcloudPushError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The push's `subject` is not standard base64.
    case malformedSubject
    /// The push's `signature` is not standard base64.
    case malformedSignature
    /// No account's user public key verifies the signature: the push is not from a server this device
    /// registered with (or was altered on the way), and must be dropped.
    case signatureNotVerified
    /// The signature verified for the account with this identifier, but its device private key decrypts the
    /// subject with neither OAEP nor PKCS#1 v1.5 padding.
    case decryptionFailed(account: String)
    /// The decrypted subject is not one of the JSON messages Nextcloud sends.
    case malformedPlaintext(reason: String)

    /// A short explanation.
    public var description: String {
        switch self {
        case .malformedSubject: "the push subject is not base64"
        case .malformedSignature: "the push signature is not base64"
        case .signatureNotVerified: "no account's user key verifies the push signature"
        case .decryptionFailed(let account): "the device key of account \(account) does not decrypt the push subject"
        case .malformedPlaintext(let reason): "the decrypted push subject is not a Nextcloud push message: \(reason)"
        }
    }
}
