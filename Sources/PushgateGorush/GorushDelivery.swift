import PushgateCore

/// One provider request a gorush notification turns into: a token (or the topic or condition of an
/// FCM topic send), the app that delivers it, and the provider-ready notification.
struct GorushDelivery: Sendable {
    /// Which notification of the request it came from.
    let index: Int
    let platform: GorushNotification.Platform
    let appID: String
    /// The device token, or the topic or condition of a topic send.
    let token: String
    /// Whether `token` is the topic or condition of a topic send.
    var isTopicSend = false
    /// The same for every device token of one notification and app (built once for them).
    var notification: PushNotification
}

/// A request, checked and turned into provider requests: what to deliver, and the failures known before
/// any delivery.
struct GorushPlan: Sendable {
    var deliveries: [GorushDelivery] = []
    var refusals: [GorushLogEntry] = []
    /// Failures gorush logs, counts and posts to its feedback webhook but leaves out of the answer (its
    /// `Push…` function returned an error with them: `router/server.go` `handleNotification` drops the
    /// entries, `notify/notification.go` `SendNotification` still posts them).
    var unlisted: [GorushLogEntry] = []
    /// gorush's `counts`.
    var counts = 0
    /// Notifications for a platform no app serves (or none gorush knows): dropped, as gorush drops them.
    var unserved = 0
    /// Every app it delivers through, for the token's app limits.
    var appIDs: Set<String> = []
}
