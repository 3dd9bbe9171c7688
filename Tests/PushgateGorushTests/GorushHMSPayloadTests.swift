import PushgateCore
@testable import PushgateGorush
import Testing

@Suite("gorush → HMS: the Push Kit message gorush would send")
struct GorushHMSPayloadTests {
    static func build(_ fields: String, toTopic: Bool = false) throws -> PushNotification {
        let notification = try #require(try GorushRequestReader.notifications(Array(#"{"notifications":[{"platform":3,"tokens":["t"],\#(fields)}]}"#.utf8)).first)
        return GorushHMSPayload.notification(for: notification, toTopic: toTopic)
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    static let defaults = #""default_sound":true,"importance":"NORMAL","click_action":{"type":1,"action":"Action"},"use_default_vibrate":true,"use_default_light":true,"visibility":"PRIVATE","foreground_show":true,"auto_cancel":true"#

    @Test(arguments: [
        (#""priority":"normal""#, #"{"android":{"urgency":"NORMAL","ttl":"86400s"}}"#),
        (#""huawei_data":"{\"k\":1}","priority":"high","huawei_ttl":"60s","huawei_collapse_key":3,"bi_tag":"b","category":"IM","fast_app_target":2"#,
         #"{"android":{"urgency":"HIGH","ttl":"60s","collapse_key":3,"bi_tag":"b","category":"IM","fast_app_target":2},"data":"{\"k\":1}"}"#),
        (#""title":"T","message":"M","image":"https://i/x.png""#,
         #"{"android":{"urgency":"NORMAL","ttl":"86400s","notification":{\#(defaults),"title":"T","body":"M","image":"https://i/x.png"}}}"#),
        (#""message":"M","sound":"/raw/ding""#, #"{"android":{"urgency":"NORMAL","ttl":"86400s","notification":{\#(defaults),"body":"M","sound":"/raw/ding"}}}"#),
        (#""huawei_notification":{"title":"N","click_action":{"type":3}}"#,
         #"{"android":{"urgency":"NORMAL","ttl":"86400s","notification":{"title":"N","click_action":{"type":3},"foreground_show":false,"default_sound":true}}}"#),
        (#""huawei_notification":{"title":"N"},"message":"M""#,
         #"{"android":{"urgency":"NORMAL","ttl":"86400s","notification":{"title":"N","body":"M","click_action":{"type":1,"action":"Action"},"foreground_show":false,"default_sound":true}}}"#),
    ])
    func messageRules(_ fields: String, _ expected: String) throws {
        #expect(try Self.build(fields).hmsMessage == Self.json(expected))
    }

    /// `huawei_ttl` (or the default day) in whole seconds is stated, not set in the payload: Huawei receives
    /// the same text, and a retry from the outbox sends what is left; any other text goes as given.
    @Test(arguments: [("", 86400, nil), (#","huawei_ttl":"60s""#, 60, nil), (#","huawei_ttl":"1.5s""#, nil, "1.5s"), (#","huawei_ttl":"060s""#, nil, "060s")] as [(String, Int?, String?)])
    func aWholeSecondsTimeToLiveIsStated(_ field: String, _ stated: Int?, _ inPayload: String?) throws {
        let built = try Self.build(#""priority":"normal""# + field)
        #expect(built.timeToLive == stated)
        if case .object(let message) = built.payload, case .object(let android)? = message["android"] {
            #expect(android["ttl"] == inPayload.map(JSONValue.string))
        } else {
            Issue.record("no android section")
        }
    }

    @Test func aTopicSendNamesTheTopic() throws {
        #expect(try Self.build(#""topic":"news""#, toTopic: true).hmsMessage == Self.json(#"{"android":{"urgency":"NORMAL","ttl":"86400s"},"topic":"news"}"#))
    }
}
