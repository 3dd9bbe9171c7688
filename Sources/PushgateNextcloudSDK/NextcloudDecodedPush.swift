/// An incoming push that verified and decrypted.
public struct NextcloudDecodedPush: Sendable {
    /// The account whose user key signed the push.
    public let account: NextcloudPushAccount
    /// What the push says.
    public let message: NextcloudPushMessage

    /// Describes a decoded push.
    public init(account: NextcloudPushAccount, message: NextcloudPushMessage) {
        self.account = account
        self.message = message
    }
}
