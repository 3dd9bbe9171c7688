import PushgateCore

/// Turns one server entry into the push a device of each platform expects (the reference's "what the
/// devices expect"): the opaque `subject` and `signature` pass through unchanged.
///
/// - FCM: a data-only message `{"data": {"subject", "signature"}}`, HIGH priority for `priority: high`,
///   NORMAL otherwise; `type` changes nothing else (Android apps handle all of them as data messages).
/// - APNs `alert`: `aps.alert` with a neutral text, the default `sound` (the iOS apps' notification
///   service extensions keep the payload's sound, or set none: without it every notification would
///   arrive silent) and `mutable-content: 1`, so the app's notification service extension decrypts and
///   rewrites it; priority 10 for high, 5 for normal.
/// - APNs `background` (deletes): `aps.content-available: 1`, no alert, priority 5.
/// - APNs `voip`: only to a PushKit token, `subject` and `signature` at the top level, priority 10; a
///   device without one gets the call as a high-priority alert.
/// - A call (`voip`, on any platform) lives ``callLifetime``: a phone that comes back online later must
///   not ring for a call long over (Talk iOS reports every VoIP push to CallKit, which rings at once).
struct NextcloudPushBuilder: Sendable {
    /// How long a call's push may wait at the provider, in seconds.
    static let callLifetime = 60

    /// The visible text of APNs alerts.
    let alertText: String

    /// The push for `entry` through an app of `platform`; `viaPushKit` when it goes to a PushKit token.
    /// - Returns: nil for platforms the Nextcloud protocol has no devices on (Web Push).
    func notification(for entry: NextcloudNotificationEntry, platform: Platform, viaPushKit: Bool) -> PushNotification? {
        let secrets: [String: JSONValue] = ["subject": .string(entry.subject), "signature": .string(entry.signature)]
        let lifetime = entry.kind == .voip ? Self.callLifetime : nil
        switch platform {
        case .fcm:
            let priority: PushPriority = entry.priority == .high && entry.kind != .background ? .high : .normal
            return PushNotification(
                kind: entry.kind == .background ? .background : .alert, priority: priority, payload: ["data": .object(secrets)],
                timeToLive: lifetime
            )
        case .apns:
            var body = secrets
            if viaPushKit {
                body["aps"] = .object([:])
                return PushNotification(kind: .voip, priority: .high, payload: .object(body), timeToLive: lifetime)
            }
            switch entry.kind {
            case .background:
                body["aps"] = ["content-available": 1]
                return PushNotification(kind: .background, priority: .normal, payload: .object(body))
            case .alert, .voip:
                body["aps"] = ["alert": ["body": .string(self.alertText)], "sound": "default", "mutable-content": 1]
                let priority: PushPriority = entry.priority == .high || entry.kind == .voip ? .high : .normal
                return PushNotification(kind: .alert, priority: priority, payload: .object(body), timeToLive: lifetime)
            }
        case .webPush, .webhook, .hms, .unifiedPush:
            return nil
        }
    }
}
