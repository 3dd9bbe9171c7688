import PushgateCore

/// The FCM HTTP v1 message gorush would send for a platform-2 notification, without its recipient:
/// `notification` from `title`/`message`/`image` (over the caller's `notification`, which holds only
/// `title`, `body` and `image`: see ``GorushRequestReader``), `data` converted to
/// strings as gorush converts it, `android.priority` from `priority`, the `apns` section gorush makes for
/// `mutable_content`, `content_available` and `sound`, and the caller's `android`, `webpush`, `apns` and
/// `fcm_options` passed through in FCM v1's JSON form.
enum GorushFCMPayload {
    /// The provider-ready notification for one token, or for the topic/condition send when `topic` or
    /// `condition` is set (`toTopic`).
    static func notification(for request: GorushNotification, toTopic: Bool = false) -> PushNotification {
        var message: [String: JSONValue] = [:]
        var notification = request.notification
        if !request.title.isEmpty || !request.message.isEmpty || !request.image.isEmpty {
            var members = notification ?? [:]
            if !request.title.isEmpty { members["title"] = .string(request.title) }
            if !request.message.isEmpty { members["body"] = .string(request.message) }
            if !request.image.isEmpty { members["image"] = .string(request.image) }
            notification = members
        }
        var apns = request.apns.map(Self.apnsSection)
        if request.mutableContent, !request.title.isEmpty || !request.message.isEmpty || !request.image.isEmpty {
            apns = ["payload": ["aps": ["mutable-content": 1]]]
        }
        if request.contentAvailable {
            var aps: [String: JSONValue] = request.data
            aps["content-available"] = 1
            apns = ["headers": ["apns-priority": "5"], "payload": ["aps": .object(aps)]]
        }
        var android = request.android.map(Self.androidSection)
        if case .string(let sound)? = request.sound {
            apns = Self.settingSound(sound, in: apns ?? [:])
            if android == nil {
                var members: [String: JSONValue] = ["notification": ["sound": .string(sound)]]
                if !request.priority.isEmpty { members["priority"] = .string(request.priority.uppercased()) }
                android = members
            }
        }
        if !request.priority.isEmpty {
            var members = android ?? [:]
            if members["priority"] == nil || members["priority"] == "" { members["priority"] = .string(request.priority.uppercased()) }
            android = members
        }
        if let notification { message["notification"] = .object(notification) }
        if let android { message["android"] = .object(android) }
        if let webpush = request.webpush { message["webpush"] = .object(webpush) }
        if let apns { message["apns"] = .object(apns) }
        if let options = request.fcmOptions { message["fcm_options"] = .object(options) }
        let data = Self.stringData(request.data)
        if !data.isEmpty { message["data"] = .object(data.mapValues(JSONValue.string)) }
        if toTopic {
            let topic = Self.bareTopic(request.topic)
            if !topic.isEmpty { message["topic"] = .string(topic) }
            if !request.condition.isEmpty { message["condition"] = .string(request.condition) }
        }
        // Only what the message says: gorush sends no `android.priority` unless the caller gave `priority`
        // or one in `android` (`notification_fcm.go` `GetAndroidNotification`).
        let priority: PushPriority?
        switch android?["priority"]?.stringValue?.lowercased() {
        case "normal"?: priority = .normal
        case "high"?: priority = .high
        default: priority = nil
        }
        return PushNotification(kind: request.contentAvailable && notification == nil ? .background : .alert, priority: priority, payload: .object(message))
    }

    /// The topic as firebase-admin-go puts it in the message (`messaging.go` `Message.MarshalJSON`): without
    /// a leading `/topics/`, which FCM v1's `topic` does not take.
    static func bareTopic(_ topic: String) -> String {
        topic.hasPrefix("/topics/") ? String(topic.dropFirst("/topics/".count)) : topic
    }

    /// `data` as gorush sends it to FCM: strings as they are, anything else as its compact JSON text.
    static func stringData(_ data: [String: JSONValue]) -> [String: String] {
        data.mapValues { value in
            if case .string(let text) = value { return text }
            return GoJSON.text(value)
        }
    }

    /// The caller's `android` object in FCM v1's form: gorush callers write `ttl` as Go's duration (a
    /// number of nanoseconds), FCM v1 takes `"<seconds>s"`; `priority` is upper-cased.
    private static func androidSection(_ android: [String: JSONValue]) -> [String: JSONValue] {
        var android = android
        if case .number(let nanoseconds)? = android["ttl"] {
            let seconds = (nanoseconds / 1_000_000_000).rounded(.down)
            android["ttl"] = .string("\(Int64(max(0, seconds)))s")
        }
        if case .string(let priority)? = android["priority"] { android["priority"] = .string(priority.uppercased()) }
        return android
    }

    /// The caller's `apns` object in FCM v1's form: `content-available` and `mutable-content` given as
    /// booleans (the Go SDK's field types) become APNs' `1`.
    private static func apnsSection(_ apns: [String: JSONValue]) -> [String: JSONValue] {
        guard case .object(var payload)? = apns["payload"], case .object(var aps)? = payload["aps"] else { return apns }
        for key in ["content-available", "mutable-content"] {
            switch aps[key] {
            case .bool(true)?: aps[key] = 1
            case .bool(false)?: aps[key] = nil
            default: break
            }
        }
        payload["aps"] = .object(aps)
        var apns = apns
        apns["payload"] = .object(payload)
        return apns
    }

    private static func settingSound(_ sound: String, in apns: [String: JSONValue]) -> [String: JSONValue] {
        var apns = apns
        var payload: [String: JSONValue] = if case .object(let members)? = apns["payload"] { members } else { [:] }
        var aps: [String: JSONValue] = if case .object(let members)? = payload["aps"] { members } else { [:] }
        aps["sound"] = .string(sound)
        payload["aps"] = .object(aps)
        apns["payload"] = .object(payload)
        return apns
    }
}
