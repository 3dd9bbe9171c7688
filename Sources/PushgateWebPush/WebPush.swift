/// The Web Push back end (RFC 8030, 8291, 8292).
///
/// ``WebPushProvider`` delivers through a push service; ``WebPushConfiguration`` reads an app's
/// `type: webpush` settings; ``WebPushSubscription``, ``WebPushEncryption``, ``VAPIDSigner`` and
/// ``PushEndpointPolicy`` (shared with the UnifiedPush back end) are its parts.
public enum WebPush {
    /// The record size written in every `aes128gcm` header, and the largest encrypted record.
    public static let recordSize = 4096
}
