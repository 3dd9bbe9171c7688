/// How a notification is to be shown, which decides provider headers (APNs push type and priority, FCM
/// priority, Web Push urgency).
public enum PushKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Shown to the user.
    case alert
    /// Wakes the app silently.
    case background
    /// A VoIP call (APNs PushKit).
    case voip
}

/// How urgently the provider should deliver.
public enum PushPriority: String, Sendable, Hashable, Codable, CaseIterable {
    /// Deliver now, waking the device (APNs 10, FCM HIGH, Web Push `Urgency: high`).
    case high
    /// Deliver when convenient (APNs 5, FCM NORMAL, Web Push `Urgency: normal`).
    case normal
}

/// One notification for one device, in the form its provider expects.
///
/// Front ends build ``payload`` for the platform of the app they deliver through: for APNs the whole JSON
/// body (with `aps`), for FCM the HTTP v1 `message` object without its `token`, for Web Push the JSON the
/// service worker receives (encrypted by the back end). The other fields become provider headers.
public struct PushNotification: Sendable, Hashable, Codable {
    /// Alert, background or VoIP.
    public var kind: PushKind
    /// Delivery urgency.
    public var priority: PushPriority
    /// The provider-ready body.
    public var payload: JSONValue
    /// How long the provider should keep trying, in seconds (APNs expiration, FCM `ttl`, Web Push `TTL`);
    /// nil leaves the provider's or the app's default.
    public var timeToLive: Int?
    /// Replaces an earlier notification with the same id (APNs `apns-collapse-id`, FCM `collapse_key`, Web
    /// Push `Topic`).
    public var collapseID: String?

    /// Creates a notification.
    public init(kind: PushKind = .alert, priority: PushPriority = .high, payload: JSONValue, timeToLive: Int? = nil, collapseID: String? = nil) {
        self.kind = kind
        self.priority = priority
        self.payload = payload
        self.timeToLive = timeToLive
        self.collapseID = collapseID
    }
}
