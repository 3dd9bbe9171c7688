/// How a notification is to be shown, which decides the APNs push type and topic (and, with a stated
/// ``PushPriority``, the Web Push urgency).
public enum PushKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Shown to the user.
    case alert
    /// Wakes the app silently.
    case background
    /// A VoIP call (APNs PushKit).
    case voip
}

/// How urgently the provider should deliver, as a front end states it.
public enum PushPriority: String, Sendable, Hashable, Codable, CaseIterable {
    /// Deliver now, waking the device (APNs 10, FCM HIGH; by default Web Push `Urgency: high`).
    case high
    /// Deliver when convenient (APNs 5, FCM NORMAL; by default Web Push `Urgency: normal`, `low` for
    /// background notifications).
    case normal
}

/// One notification for one device, in the form its provider expects.
///
/// Front ends build ``payload`` for the platform of the app they deliver through: for APNs the whole JSON
/// body (with `aps`), for FCM the HTTP v1 `message` object without its `token`, for Web Push the JSON the
/// service worker receives (encrypted by the back end). The other fields become provider headers and
/// fields: the front end says what it means and each back end validates and encodes it, never replaces it,
/// and never adds one the front end left out (nil): every default belongs to the front end whose protocol
/// defines it.
///
/// It is stored in the durable outbox as JSON (its `Codable` form): fields added later are optional, so an
/// entry written before they existed still decodes (and an older version reading a newer entry ignores
/// them).
public struct PushNotification: Sendable {
    /// Alert, background or VoIP.
    public var kind: PushKind
    /// Delivery urgency: APNs `apns-priority` (10 or 5; background pushes are always 5, as APNs requires),
    /// FCM `android.priority` and HMS `android.urgency` (when the payload sets none), and the Web Push
    /// `Urgency` when ``webPushUrgency`` is nil. Nil: the front end's protocol states none, and no back end
    /// sends one (the provider's default applies).
    public var priority: PushPriority?
    /// The provider-ready body. A notification made with ``init(kind:payloadText:)`` reads its text here
    /// (back ends that send it as text take ``payloadText()`` instead); setting it replaces the text.
    public var payload: JSONValue {
        get { self.payloadForm.value }
        set { self.payloadForm = .value(newValue) }
    }
    /// The payload as the front end gave it.
    var payloadForm: PushPayloadForm
    /// How long the provider should keep trying, in seconds (APNs expiration, FCM `ttl`, Web Push `TTL`);
    /// nil leaves the provider's or the app's default.
    public var timeToLive: Int?
    /// Replaces an earlier notification with the same id: APNs `apns-collapse-id` (at most 64 bytes), FCM
    /// `collapse_key`, Web Push `Topic`. Each back end sends it as it is or rejects the notification when
    /// its provider cannot take it: Web Push takes at most 32 characters of the base64url alphabet
    /// followed by optional `=` padding (`^[0-9A-Za-z_-]+=*$`, as push services check). Nil or empty: none.
    public var collapseID: String?
    /// The Web Push `Urgency`; nil: the one ``priority`` means for ``kind`` (see
    /// ``effectiveWebPushUrgency``), none when no priority is stated either. Other providers ignore it.
    public var webPushUrgency: WebPushUrgency?
    /// The APNs `apns-topic` the sender chose (a gorush caller's `topic`); nil: the app's topic. The APNs
    /// back end sends it unchanged when it is the app's topic or that topic with a suffix (`.voip`,
    /// `.complication`, `.push-type.liveactivity`, …) and rejects the notification otherwise.
    public var apnsTopic: String?
    /// The APNs `apns-push-type` the sender chose, when ``kind`` cannot say it (`liveactivity`,
    /// `location`, `complication`, …); nil: the push type of ``kind``. The APNs back end rejects a value
    /// APNs does not define.
    public var apnsPushType: String?
    /// The APNs `apns-id` the sender chose (a UUID); nil: a new one per attempt.
    public var apnsID: String?
    /// When the notification stops being worth delivering, in seconds since 1970 (APNs
    /// `apns-expiration`, an absolute time); when set it wins over ``timeToLive`` for APNs. Nil: none.
    public var expiration: Int64?
    /// A smaller payload the front end offers for when this one is too large for the provider (a UnifiedPush
    /// push server's 413, a Web Push payload over 3993 bytes): the back end sends it instead, and never
    /// makes one up. Nil: none (the Matrix gateway states its `event_id_only` form for UnifiedPush
    /// notifications it queues, and its Web Push payload without `content` when the content is long).
    public var reducedPayload: JSONValue?

    /// Creates a notification.
    public init(
        kind: PushKind = .alert, priority: PushPriority? = nil, payload: JSONValue, timeToLive: Int? = nil, collapseID: String? = nil,
        webPushUrgency: WebPushUrgency? = nil, apnsTopic: String? = nil, apnsPushType: String? = nil, apnsID: String? = nil, expiration: Int64? = nil
    ) {
        self.kind = kind
        self.priority = priority
        self.payloadForm = .value(payload)
        self.timeToLive = timeToLive
        self.collapseID = collapseID
        self.webPushUrgency = webPushUrgency
        self.apnsTopic = apnsTopic
        self.apnsPushType = apnsPushType
        self.apnsID = apnsID
        self.expiration = expiration
    }

    /// The Web Push `Urgency` to send: ``webPushUrgency`` when the front end stated one, else
    /// ``WebPushUrgency/init(kind:priority:)`` of a stated ``priority``, else nil (no `Urgency` header:
    /// the push service's default, `normal`).
    public var effectiveWebPushUrgency: WebPushUrgency? {
        self.webPushUrgency ?? self.priority.map { WebPushUrgency(kind: self.kind, priority: $0) }
    }
}
