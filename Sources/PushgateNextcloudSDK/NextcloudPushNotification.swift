/// A new notification announced by a push: what to show, and the `nid` to fetch the whole notification
/// with `GET /ocs/v2.php/apps/notifications/api/v2/notifications/{nid}`.
public struct NextcloudPushNotification: Sendable, Hashable {
    /// The Nextcloud app that created it, for example `spreed` or `admin_notification_talk`.
    public var app: String
    /// The type of the object it is about, for example `chat`, `call` or `admin_notifications`.
    public var type: String
    /// The subject line, shortened by the server so the message fits 200 bytes (ending in `…` when cut).
    public var subject: String
    /// The identifier of the object it is about (a conversation token, a file id, …). JSON numbers are
    /// kept as their decimal text.
    public var id: String
    /// The notification's numeric identifier on the server.
    public var nid: Int

    /// Describes a notification.
    public init(app: String, type: String, subject: String, id: String, nid: Int) {
        self.app = app
        self.type = type
        self.subject = subject
        self.id = id
        self.nid = nid
    }
}
