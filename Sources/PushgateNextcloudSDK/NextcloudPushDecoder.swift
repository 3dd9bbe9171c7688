import Foundation

/// Verifies, decrypts and reads incoming Nextcloud pushes, as the Nextcloud apps do.
///
/// A push (FCM `data` or APNs payload) carries `subject`, the base64 RSA ciphertext of a small JSON
/// message, and `signature`, base64 RSASSA-PKCS1-v1_5/SHA-512 over the ciphertext bytes made with the
/// user's private key. ``decode(subject:signature:)``:
///
/// 1. base64-decodes both;
/// 2. tries each account's user public key in order; the first that verifies the signature selects the
///    account (none: the push is dropped with ``NextcloudPushError/signatureNotVerified``);
/// 3. decrypts with that account's device private key, RSA-OAEP (SHA-1, MGF1-SHA-1) first, as Nextcloud
///    35 and later send, then PKCS#1 v1.5, as earlier servers send;
/// 4. reads the JSON into a ``NextcloudPushMessage``.
public struct NextcloudPushDecoder: Sendable {
    /// The accounts a push may be for, tried in this order.
    public let accounts: [NextcloudPushAccount]

    /// Creates a decoder for `accounts`.
    public init(accounts: [NextcloudPushAccount]) {
        self.accounts = accounts
    }

    /// Verifies, decrypts and reads one push.
    /// - Parameters:
    ///   - subject: the push's `subject`, base64.
    ///   - signature: the push's `signature`, base64.
    /// - Returns: the account it is for and what it says.
    /// - Throws: ``NextcloudPushError``.
    public func decode(subject: String, signature: String) throws(NextcloudPushError) -> NextcloudDecodedPush {
        guard let ciphertext = Data(base64Encoded: subject), !ciphertext.isEmpty else {
            throw .malformedSubject
        }
        guard let signatureBytes = Data(base64Encoded: signature), !signatureBytes.isEmpty else {
            throw .malformedSignature
        }
        let ciphertextBytes = Array(ciphertext)
        let signatureArray = Array(signatureBytes)
        guard let account = self.accounts.first(where: { $0.signed(ciphertextBytes, signature: signatureArray) }) else {
            throw .signatureNotVerified
        }
        guard let plaintext = account.deviceKey.decrypt(ciphertext) else {
            throw .decryptionFailed(account: account.identifier)
        }
        return NextcloudDecodedPush(account: account, message: try NextcloudPushMessage(plaintext: plaintext))
    }
}
