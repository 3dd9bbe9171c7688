import PushgateCore
@testable import PushgateDelivery
@testable import PushgateGorush
import Testing

/// A caller's `android`, `webpush`, `apns` and `fcm_options` as gorush reads them into firebase-admin-go
/// v4.19.0's typed structs and firebase-admin-go writes them back (gorush `notify/notification.go`
/// `PushNotification`; firebase-admin-go `messaging/messaging.go`), and the messages firebase-admin-go
/// refuses to send (`messaging/messaging_utils.go` `validateMessage`).
@Suite("gorush → FCM: the caller's sections through firebase-admin-go's structs")
struct GorushFCMSectionsTests {
    static func build(_ fields: String, toTopic: Bool = false) throws -> PushNotification {
        try GorushFCMPayloadTests.build(fields, toTopic: toTopic)
    }

    /// Members a struct does not declare are dropped (`AndroidConfig`, `AndroidNotification`, `ApsAlert`,
    /// `CriticalSound`, `WebpushNotificationAction`, `APNSConfig`, `FCMOptions`), except in the structs that
    /// keep custom data (`WebpushNotification`, `APNSPayload`, `Aps`: their `UnmarshalJSON` and
    /// `MarshalJSON`); typed fields at their zero value are left out (`omitempty`), but a given `badge` or
    /// `notification_count` is written even when 0 (pointers).
    @Test(arguments: [
        (##""android":{"priority":"high","foo":1,"notification":{"title":"T","bar":"x","color":"#112233","notification_count":0}}"##,
         ##"{"android":{"priority":"high","notification":{"title":"T","color":"#112233","notification_count":0}}}"##),
        (#""android":{"collapse_key":"","direct_boot_ok":false,"data":{},"fcm_options":{"analytics_label":"a","x":"y"}}"#,
         #"{"android":{"fcm_options":{"analytics_label":"a"}}}"#),
        (#""webpush":{"headers":{"Urgency":"high"},"foo":1,"notification":{"title":"T","custom":"c","silent":false,"actions":[{"action":"a","x":1}]}}"#,
         #"{"webpush":{"headers":{"Urgency":"high"},"notification":{"title":"T","custom":"c","silent":false,"actions":[{"action":"a"}]}}}"#),
        (#""apns":{"headers":{"apns-priority":"10"},"foo":1,"payload":{"aps":{"alert":{"title":"T","x":1},"badge":0,"custom":true},"k":"v"}}"#,
         #"{"apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"alert":{"title":"T"},"badge":0,"custom":true},"k":"v"}}}"#),
        (#""apns":{"payload":{"aps":{"sound":{"critical":1,"name":"n","volume":0.5,"x":1},"alert":"A"}}}"#,
         #"{"apns":{"payload":{"aps":{"sound":{"critical":1,"name":"n","volume":0.5},"alert":"A"}}}}"#),
        // `APNSPayload.MarshalJSON` always writes `aps`.
        (#""apns":{"payload":{"k":"v"},"live_activity_token":"l"}"#, #"{"apns":{"payload":{"aps":null,"k":"v"},"live_activity_token":"l"}}"#),
        (#""fcm_options":{"analytics_label":"x","foo":"y"}"#, #"{"fcm_options":{"analytics_label":"x"}}"#),
        // Keys match declared fields ignoring case, as Go's decoder matches them.
        (#""android":{"Priority":"normal","COLLAPSE_KEY":"k"}"#, #"{"android":{"priority":"normal","collapse_key":"k"}}"#),
    ])
    func undeclaredMembersAreDroppedAsFirebaseAdminGoDropsThem(_ fields: String, _ expected: String) throws {
        let built = try Self.build(fields).fcmMessage
        #expect(built == (try GorushFCMPayloadTests.json(expected)), "sent: \(built.map(GoJSON.text) ?? "nothing")")
    }

    /// A time to live of whole seconds is stated, not set in the payload: FCM receives the same text, and a
    /// retry from the outbox sends what is left of it; any other goes in the payload as written.
    @Test func aWholeSecondsTimeToLiveIsStatedSoARetrySendsWhatIsLeft() throws {
        let built = try Self.build(#""android":{"ttl":"3600s","collapse_key":"k"}"#)
        #expect(built.timeToLive == 3600)
        let later = try #require(QueuedLifetime.remaining(of: built, age: 600.2, tried: true))
        #expect(later.fcmMessage == (try GorushFCMPayloadTests.json(#"{"android":{"collapse_key":"k","ttl":"3000s"}}"#)))
        #expect(QueuedLifetime.remaining(of: built, age: 3600, tried: true) == nil)
        let fractional = try Self.build(#""android":{"ttl":"3.5s"}"#)
        #expect(fractional.timeToLive == nil)
        #expect(fractional.payload == (try GorushFCMPayloadTests.json(#"{"android":{"ttl":"3.000000005s"}}"#)))
    }

    /// `android.ttl` is read by `AndroidConfig.UnmarshalJSON` as text (`stringToDuration`) and written back
    /// by `durationToString`: whole seconds, then nine digits of nanoseconds when there are any; the part
    /// after the point is read as nanoseconds with its leading zeros dropped.
    @Test(arguments: [
        ("3600s", "3600s"), ("90", "90s"), ("3.5s", "3.000000005s"), ("1.000000001s", "1.000000001s"), ("0s", "0s"), ("", nil),
    ])
    func theTimeToLiveIsWrittenAsFirebaseAdminGoWritesIt(_ given: String, _ expected: String?) throws {
        let built = try Self.build(#""android":{"ttl":"\#(given)"}"#)
        #expect(built.fcmMessage == .object(["android": .object(expected.map { ["ttl": .string($0)] } ?? [:])]))
    }

    /// What Go's decoder refuses fails gorush's binding, so the whole request (400 `Missing notifications
    /// field.`): a number for `ttl` (the struct's field is a string), a duration it cannot read, a value of
    /// the wrong type anywhere in the sections, `content-available` as a boolean (`Aps.UnmarshalJSON`
    /// reads an integer), an unknown enumeration value (`AndroidNotification.UnmarshalJSON`).
    @Test(arguments: [
        #""android":{"ttl":3600}"#, #""android":{"ttl":"abc"}"#, #""android":{"ttl":"3.0s"}"#, #""android":{"ttl":"1.2.3s"}"#,
        #""android":{"priority":1}"#, #""android":{"notification":{"visibility":"HIDDEN"}}"#, #""android":{"data":{"k":1}}"#,
        #""android":{"notification":{"vibrate_timings":[100]}}"#, #""android":{"notification":{"light_settings":{"color":{"red":1}}}}"#,
        #""webpush":{"headers":{"TTL":60}}"#, #""webpush":{"notification":{"silent":"yes"}}"#,
        #""apns":{"payload":{"aps":{"content-available":true}}}"#, #""apns":{"payload":{"aps":{"sound":5}}}"#,
        #""apns":{"payload":{"aps":{"alert":{"title":5}}}}"#, #""fcm_options":{"analytics_label":1}"#, #""apns":{"payload":[]}"#,
    ])
    func whatGosDecoderRefusesFailsTheRequest(_ fields: String) throws {
        #expect(throws: GorushRequestReader.Unreadable.self) {
            _ = try GorushRequestReader.notifications(Array(#"{"notifications":[{"platform":2,"tokens":["t"],\#(fields)}]}"#.utf8))
        }
    }

    /// What firebase-admin-go refuses to send (`validateMessage`), as gorush logs it (`PushToAndroid`):
    /// a topic and a condition together, a malformed topic, an `android.priority` other than `normal` or
    /// `high` (a caller's `priority` goes there as given), a negative `ttl`.
    @Test(arguments: [
        (#""topic":"news","condition":"'a' in topics""#, "exactly one of token, topic or condition must be specified"),
        (#""topic":"/topics/a/b""#, "malformed topic name"),
        (#""topic":"news!""#, "malformed topic name"),
        (#""priority":"HIGH""#, "priority must be 'normal' or 'high'"),
        (#""priority":"urgent","android":{"collapse_key":"k"}"#, "priority must be 'normal' or 'high'"),
        (#""android":{"priority":"High"}"#, "priority must be 'normal' or 'high'"),
        (#""android":{"ttl":"-5s"}"#, "ttl duration must not be negative"),
        (#""topic":"/topics/news","priority":"high","android":{"ttl":"0s"}"#, nil),
        (#""condition":"'a' in topics","android":{"priority":"normal"},"priority":"HIGH""#, nil),
    ])
    func whatFirebaseAdminGoRefusesToSendIsRefused(_ fields: String, _ reason: String?) throws {
        let notification = try GorushFCMPayloadTests.notification(fields)
        #expect(GorushFCMPayload.refusal(of: notification) == reason.map { "fcm service send message error: invalid message at index 0: \($0)" })
    }
}
