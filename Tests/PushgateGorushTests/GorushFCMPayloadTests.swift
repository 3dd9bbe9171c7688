import PushgateCore
@testable import PushgateGorush
import Testing

@Suite("gorush → FCM: the v1 message gorush would send")
struct GorushFCMPayloadTests {
    static func notification(_ fields: String) throws -> GorushNotification {
        try #require(try GorushRequestReader.notifications(Array(#"{"notifications":[{"platform":2,"tokens":["t"],\#(fields)}]}"#.utf8)).first)
    }

    static func build(_ fields: String, toTopic: Bool = false) throws -> PushNotification {
        GorushFCMPayload.notification(for: try Self.notification(fields), toTopic: toTopic)
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test(arguments: [
        (#""title":"T","message":"M","image":"https://i/x.png""#, #"{"notification":{"title":"T","body":"M","image":"https://i/x.png"}}"#),
        (#""notification":{"title":"N"},"message":"M""#, #"{"notification":{"title":"N","body":"M"}}"#),
        // data: strings unchanged, anything else as Go's JSON text (HTML characters escaped).
        (#""data":{"s":"v","n":1,"f":1.5,"b":true,"o":{"z":1,"a":"<&>"},"l":[1,"x"],"nil":null}"#,
         #"{"data":{"s":"v","n":"1","f":"1.5","b":"true","o":"{\"a\":\"\\u003c\\u0026\\u003e\",\"z\":1}","l":"[1,\"x\"]","nil":"null"}}"#),
        // Numbers as Go writes a float64: plain from 1e-6 to below 1e21, with an exponent outside.
        (#""data":{"small":0.00001,"tiny":1.5e-7,"big":1e21,"long":12345678901234567890,"in":{"x":0.00002}}"#,
         #"{"data":{"small":"0.00001","tiny":"1.5e-7","big":"1e+21","long":"12345678901234567000","in":"{\"x\":0.00002}"}}"#),
        // `priority` as given: firebase-admin-go takes `normal` or `high` and sends them so.
        (#""priority":"high""#, #"{"android":{"priority":"high"}}"#),
        (#""priority":"normal","android":{"collapse_key":"k","ttl":"3600s"}"#, #"{"android":{"priority":"normal","collapse_key":"k","ttl":"3600s"}}"#),
        (#""sound":"ding""#, #"{"android":{"notification":{"sound":"ding"}},"apns":{"payload":{"aps":{"sound":"ding"}}}}"#),
        (#""message":"M","mutable_content":true"#, #"{"notification":{"body":"M"},"apns":{"payload":{"aps":{"mutable-content":1}}}}"#),
        (#""content_available":true,"data":{"k":"v"}"#,
         #"{"data":{"k":"v"},"apns":{"headers":{"apns-priority":"5"},"payload":{"aps":{"content-available":1,"k":"v"}}}}"#),
        (#""apns":{"payload":{"aps":{"content-available":1}}},"webpush":{"headers":{"TTL":"60"}},"fcm_options":{"analytics_label":"x"}"#,
         #"{"apns":{"payload":{"aps":{"content-available":1}}},"webpush":{"headers":{"TTL":"60"}},"fcm_options":{"analytics_label":"x"}}"#),
    ])
    func messageRules(_ fields: String, _ expected: String) throws {
        #expect(try Self.build(fields).fcmMessage == Self.json(expected))
    }

    /// The caller's `notification` is read into firebase-admin-go's `messaging.Notification` (gorush
    /// `notify/notification.go` `PushNotification.Notification`; firebase-admin-go v4 `messaging.go`
    /// `Notification`: `title`, `body`, `image`), so every other member is dropped, and nothing of it goes
    /// to `android.notification` either: only the top-level `sound` string does (`notification_fcm.go`
    /// `setupFCMSound`). FCM v1 refuses a `notification` with any other member.
    @Test(arguments: [
        (##""notification":{"title":"N","body":"B","image":"https://i/x.png","icon":"ic","color":"#ff0000","click_action":"open","sound":"ding","tag":"t","body_loc_key":"k","badge":"1","android_channel_id":"c"}"##,
         #"{"notification":{"title":"N","body":"B","image":"https://i/x.png"}}"#),
        // Only dropped members: gorush still has a (now empty) `Notification`, which marshals as `{}`.
        (#""notification":{"icon":"ic","click_action":"open"}"#, #"{"notification":{}}"#),
        // `title`/`message`/`image` win over the object's (`setupFCMNotification`); empty strings are left out.
        (#""notification":{"title":"N","body":"","icon":"ic"},"title":"T","message":"M""#, #"{"notification":{"title":"T","body":"M"}}"#),
        (#""notification":{"sound":"ignored","tag":"t"},"message":"M","sound":"ding""#,
         #"{"notification":{"body":"M"},"android":{"notification":{"sound":"ding"}},"apns":{"payload":{"aps":{"sound":"ding"}}}}"#),
    ])
    func theNotificationObjectKeepsOnlyTitleBodyAndImage(_ fields: String, _ expected: String) throws {
        #expect(try Self.build(fields).fcmMessage == Self.json(expected))
    }

    /// firebase-admin-go sends `topic` without a leading `/topics/` (`messaging.go` `Message.MarshalJSON`,
    /// `strings.TrimPrefix(m.Topic, "/topics/")`); gorush passes the caller's topic to it as written
    /// (`notification_fcm.go` `GetAndroidNotification`). A condition goes unchanged.
    @Test(arguments: [
        (#""topic":"/topics/news""#, #"{"notification":{"body":"M"},"topic":"news"}"#),
        (#""topic":"news""#, #"{"notification":{"body":"M"},"topic":"news"}"#),
        (#""topic":"/topics/a/topics/b""#, #"{"notification":{"body":"M"},"topic":"a/topics/b"}"#),
        (#""topic":"topics/news""#, #"{"notification":{"body":"M"},"topic":"topics/news"}"#),
        (#""condition":"'/topics/news' in topics""#, #"{"notification":{"body":"M"},"condition":"'/topics/news' in topics"}"#),
    ])
    func aTopicIsSentWithoutTheTopicsPrefix(_ fields: String, _ expected: String) throws {
        #expect(try Self.build(fields + #","message":"M""#, toTopic: true).fcmMessage == Self.json(expected))
    }

    @Test func aTopicSendCarriesTheTopicOrCondition() throws {
        #expect(try Self.build(#""topic":"news","message":"M""#, toTopic: true).fcmMessage == Self.json(#"{"notification":{"body":"M"},"topic":"news"}"#))
        #expect(
            try Self.build(#""condition":"'a' in topics","message":"M""#, toTopic: true).fcmMessage
                == Self.json(#"{"notification":{"body":"M"},"condition":"'a' in topics"}"#)
        )
        // The per-token messages of the same notification carry neither.
        #expect(try Self.build(#""topic":"news","message":"M""#).fcmMessage == Self.json(#"{"notification":{"body":"M"}}"#))
    }

    @Test func priorityAndKindFollowTheRequest() throws {
        #expect(try Self.build(#""priority":"normal""#).priority == .normal)
        // No `priority` and no `android.priority`: gorush sends no `android` block, so none is stated.
        #expect(try Self.build(#""message":"m""#).priority == nil)
        #expect(try Self.build(#""android":{"priority":"high"}"#).priority == .high)
        #expect(try Self.build(#""content_available":true"#).kind == .background)
    }
}
