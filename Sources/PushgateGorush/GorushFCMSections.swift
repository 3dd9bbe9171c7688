import PushgateCore

/// A caller's `android`, `webpush`, `apns` and `fcm_options` objects as gorush reads them: into
/// firebase-admin-go v4.19.0's typed structs (gorush `notify/notification.go` `PushNotification`;
/// firebase-admin-go `messaging/messaging.go` `AndroidConfig`, `WebpushConfig`, `APNSConfig`,
/// `FCMOptions` and what they hold), which firebase-admin-go writes back into the FCM v1 message.
///
/// So, as there: a member of a struct that declares no such field is dropped (`android.foo`,
/// `apns.payload.aps.alert.foo`), except where firebase-admin-go keeps extra members (`apns.payload`,
/// `apns.payload.aps` and `webpush.notification` carry them as custom data); a member of the wrong JSON
/// type fails the whole request, as Go's decoder fails gorush's binding (400 `Missing notifications
/// field.`); empty values of typed fields are left out (`omitempty`); durations (`android.ttl`,
/// `vibrate_timings`, the light settings' durations) are read from and written back in
/// firebase-admin-go's text form, so a number there fails the request.
enum GorushFCMSections {
    /// The `android` object (firebase-admin-go `AndroidConfig`) and its `ttl` in nanoseconds, as
    /// firebase-admin-go holds it (nil when absent or empty), for the checks before sending.
    static func android(_ members: [String: JSONValue], path: String) throws(GorushRequestReader.Unreadable) -> (
        section: [String: JSONValue], ttl: Int64?
    ) {
        let section = try Self.androidConfig.read(members, path: path)
        var ttl: Int64?
        if case .string(let text)? = section["ttl"] { ttl = GoDuration.parse(text) }
        return (section, ttl)
    }

    /// The `webpush` object (firebase-admin-go `WebpushConfig`).
    static func webpush(_ members: [String: JSONValue], path: String) throws(GorushRequestReader.Unreadable) -> [String: JSONValue] {
        try Self.webpushConfig.read(members, path: path)
    }

    /// The `apns` object (firebase-admin-go `APNSConfig`).
    static func apns(_ members: [String: JSONValue], path: String) throws(GorushRequestReader.Unreadable) -> [String: JSONValue] {
        try Self.apnsConfig.read(members, path: path)
    }

    /// The `fcm_options` object (firebase-admin-go `FCMOptions`).
    static func fcmOptions(_ members: [String: JSONValue], path: String) throws(GorushRequestReader.Unreadable) -> [String: JSONValue] {
        try Self.options.read(members, path: path)
    }

    // MARK: firebase-admin-go's structs, field by field (their JSON names)

    /// `FCMOptions`, `AndroidFCMOptions`.
    private static let options = GoStruct(["analytics_label": .string])

    /// `AndroidConfig` (`ttl` through its `MarshalJSON` / `UnmarshalJSON`).
    private static let androidConfig = GoStruct([
        "collapse_key": .string, "priority": .string, "ttl": .duration(required: false), "restricted_package_name": .string, "data": .stringMap,
        "notification": .object(Self.androidNotification), "fcm_options": .object(Self.options), "direct_boot_ok": .bool,
    ])

    /// `AndroidNotification` (`notification_priority`, `visibility`, `proxy`, `vibrate_timings` and
    /// `event_time` through its `MarshalJSON` / `UnmarshalJSON`).
    private static let androidNotification = GoStruct([
        "title": .string, "body": .string, "icon": .string, "color": .string, "sound": .string, "tag": .string, "click_action": .string,
        "body_loc_key": .string, "body_loc_args": .strings, "title_loc_key": .string, "title_loc_args": .strings, "channel_id": .string,
        "image": .string, "ticker": .string, "sticky": .bool, "event_time": .string, "local_only": .bool,
        "notification_priority": .oneOf(["PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX"]),
        "default_vibrate_timings": .bool, "default_sound": .bool, "light_settings": .object(Self.lightSettings),
        "default_light_settings": .bool, "visibility": .oneOf(["PRIVATE", "PUBLIC", "SECRET"]), "notification_count": .intPointer,
        "proxy": .oneOf(["ALLOW", "DENY", "IF_PRIORITY_LOWERED"]), "vibrate_timings": .millisecondDurations,
    ])

    /// `LightSettings` as its `UnmarshalJSON` reads it: a colour of four numbers and two durations, all
    /// written back (no `omitempty`).
    private static let lightSettings = GoStruct(
        [
            "color": .object(GoStruct(["red": .float, "green": .float, "blue": .float, "alpha": .float], keepsZeros: true)),
            "light_on_duration": .duration(required: true), "light_off_duration": .duration(required: true),
        ],
        keepsZeros: true
    )

    /// `WebpushConfig`.
    private static let webpushConfig = GoStruct([
        "headers": .stringMap, "data": .stringMap, "notification": .object(Self.webpushNotification),
        "fcm_options": .object(GoStruct(["link": .string])),
    ])

    /// `WebpushNotification`, which keeps the members it does not declare (`CustomData`).
    private static let webpushNotification = GoStruct(
        [
            "actions": .objects(GoStruct(["action": .string, "title": .string, "icon": .string])), "title": .string, "body": .string,
            "icon": .string, "badge": .string, "dir": .string, "data": .any, "image": .string, "lang": .string, "renotify": .bool,
            "requireInteraction": .bool, "silent": .bool, "tag": .string, "timestamp": .intPointer, "vibrate": .ints,
        ],
        keepsOthers: true
    )

    /// `APNSConfig`.
    private static let apnsConfig = GoStruct([
        "headers": .stringMap, "payload": .object(Self.apnsPayload),
        "fcm_options": .object(GoStruct(["analytics_label": .string, "image": .string])), "live_activity_token": .string,
    ])

    /// `APNSPayload`, which keeps the members it does not declare, and always writes `aps` (null when the
    /// caller gave none).
    private static let apnsPayload = GoStruct(["aps": .object(Self.aps)], keepsOthers: true, alwaysWritten: "aps")

    /// `Aps` as its `UnmarshalJSON` reads it: `alert` an `ApsAlert` or a string, `sound` a `CriticalSound`
    /// or a string, `content-available` and `mutable-content` integers; it keeps the members it does not
    /// declare.
    private static let aps = GoStruct(
        [
            "alert": .objectOrString(Self.apsAlert), "badge": .intPointer, "sound": .objectOrString(Self.criticalSound),
            "content-available": .int, "mutable-content": .int, "category": .string, "thread-id": .string,
        ],
        keepsOthers: true
    )

    /// `ApsAlert`.
    private static let apsAlert = GoStruct([
        "title": .string, "subtitle": .string, "body": .string, "loc-key": .string, "loc-args": .strings, "title-loc-key": .string,
        "title-loc-args": .strings, "subtitle-loc-key": .string, "subtitle-loc-args": .strings, "action-loc-key": .string,
        "launch-image": .string,
    ])

    /// `CriticalSound` (`critical` written back as 1 only when it was 1).
    private static let criticalSound = GoStruct(["critical": .flag, "name": .string, "volume": .float])
}
