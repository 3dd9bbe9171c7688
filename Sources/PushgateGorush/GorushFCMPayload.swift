import PushgateCore

/// The FCM HTTP v1 message gorush would send for a platform-2 notification, without its recipient:
/// `notification` from `title`/`message`/`image` (over the caller's `notification`, which holds only
/// `title`, `body` and `image`: see ``GorushRequestReader``), `data` converted to
/// strings as gorush converts it, `android.priority` from `priority` (as given: firebase-admin-go takes
/// `normal` or `high` and sends them so), the `apns` section gorush makes for `mutable_content`,
/// `content_available` and `sound`, and the caller's `android`, `webpush`, `apns` and `fcm_options` as
/// firebase-admin-go writes them (``GorushFCMSections``). ``refusal(of:)`` says when firebase-admin-go
/// would refuse to send the notification at all.
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
        var apns = request.apns
        if request.mutableContent, !request.title.isEmpty || !request.message.isEmpty || !request.image.isEmpty {
            apns = ["payload": ["aps": ["mutable-content": 1]]]
        }
        if request.contentAvailable {
            var aps: [String: JSONValue] = request.data
            aps["content-available"] = 1
            apns = ["headers": ["apns-priority": "5"], "payload": ["aps": .object(aps)]]
        }
        var android = request.android
        if case .string(let sound)? = request.sound {
            apns = Self.settingSound(sound, in: apns ?? [:])
            if android == nil {
                var members: [String: JSONValue] = ["notification": ["sound": .string(sound)]]
                if !request.priority.isEmpty { members["priority"] = .string(request.priority) }
                android = members
            }
        }
        if !request.priority.isEmpty {
            var members = android ?? [:]
            if members["priority"] == nil || members["priority"] == "" { members["priority"] = .string(request.priority) }
            android = members
        }
        // A time to live of whole seconds is stated rather than set in the payload, so that a retry from the
        // outbox sends what is left of it; the FCM back end writes it back as firebase-admin-go does (`60s`).
        var timeToLive: Int?
        if let nanoseconds = request.androidTTL, nanoseconds >= 0, nanoseconds % 1_000_000_000 == 0,
            case .string(let text)? = android?["ttl"], text == "\(nanoseconds / 1_000_000_000)s"
        {
            timeToLive = Int(nanoseconds / 1_000_000_000)
            android?["ttl"] = nil
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
        switch android?["priority"]?.stringValue {
        case "normal"?: priority = .normal
        case "high"?: priority = .high
        default: priority = nil
        }
        return PushNotification(
            kind: request.contentAvailable && notification == nil ? .background : .alert, priority: priority, payload: .object(message),
            timeToLive: timeToLive
        )
    }

    /// Why firebase-admin-go would refuse the messages gorush builds for `request` (all of them, since
    /// `SendEach` checks every message before sending any: firebase-admin-go `messaging/messaging_batch.go`
    /// `sendEachInBatch`, `messaging/messaging_utils.go` `validateMessage`), in gorush's words (`notify/
    /// notification_fcm.go` `PushToAndroid`); nil when it would send them. The topic or condition message
    /// comes first (`GetAndroidNotification`), and the token messages share every other field, so the
    /// first refused message is always the one at index 0. Checked: one target a message (a topic and a
    /// condition together are two), a well-formed topic, `android.priority` `normal` or `high`, and a
    /// `ttl` not negative.
    static func refusal(of request: GorushNotification) -> String? {
        let reason: String? = {
            if request.isTopicSend {
                if !request.topic.isEmpty, !request.condition.isEmpty { return "exactly one of token, topic or condition must be specified" }
                if !request.topic.isEmpty, !Self.isBareTopicName(Self.bareTopic(request.topic)) { return "malformed topic name" }
            }
            if let ttl = request.androidTTL, ttl < 0 { return "ttl duration must not be negative" }
            let given = request.android?["priority"]?.stringValue ?? ""
            let priority = given.isEmpty ? request.priority : given
            if !priority.isEmpty, priority != "normal", priority != "high" { return "priority must be 'normal' or 'high'" }
            return nil
        }()
        return reason.map { "fcm service send message error: invalid message at index 0: \($0)" }
    }

    /// firebase-admin-go's pattern of a topic name (`bareTopicNamePattern`): ASCII letters, digits and
    /// `-_.~%`, at least one.
    private static func isBareTopicName(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "%"): true
            default: false
            }
        }
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
