/// The Apple Push Notification service back end (HTTP/2, token or certificate authentication).
///
/// ``APNsConfiguration`` reads an app's Sygnal-compatible settings, ``APNsProvider`` delivers, and
/// ``APNsProviderToken`` signs the provider tokens of token authentication.
public enum APNs {
    /// The largest body APNs accepts for an alert or background notification, in bytes.
    public static let maximumPayloadSize = 4096
    /// The largest body APNs accepts for a VoIP notification, in bytes.
    public static let maximumVoIPPayloadSize = 5120
    /// The longest `apns-collapse-id` APNs accepts, in bytes.
    public static let maximumCollapseIDSize = 64
}
