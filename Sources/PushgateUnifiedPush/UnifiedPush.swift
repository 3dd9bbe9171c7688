/// The UnifiedPush back end: a Matrix gateway's side of UnifiedPush, which posts each notification to the
/// device's endpoint URL (its pushkey) at the distributor's push server, as common-proxies' Matrix gateway
/// does.
///
/// ``UnifiedPushProvider`` delivers; ``UnifiedPushConfiguration`` reads an app's `type: unifiedpush`
/// settings; ``UnifiedPushAnswer`` classes the push server's answers; `UnifiedPushEndpointMemory`
/// remembers endpoints found gone and hosts failing for a while.
public enum UnifiedPush {
    /// The largest message body a push server takes (the UnifiedPush and Web Push limit, RFC 8030 §7.2
    /// as the UnifiedPush specifications state it).
    public static let maximumBodySize = 4096
    /// The `Content-Encoding` sent with every message. The body is the notification's JSON text, not
    /// encrypted (a Matrix pusher holds no keys to encrypt with), but push servers and the distributors'
    /// connector libraries take a UnifiedPush message as Web Push's `aes128gcm` (ntfy treats the header
    /// like `up=1`; the Android connector hands a body it cannot decrypt to the app as it is), as the
    /// common-proxies gateway sends it.
    public static let contentEncoding = "aes128gcm"
}
