import PushgateCore
@testable import PushgateGorush
import Testing

@Suite("gorush → APNs: the payload and headers gorush would send")
struct GorushAPNsPayloadTests {
    static func build(_ fields: String) throws -> PushNotification {
        let notification = try #require(try GorushRequestReader.notifications(Array(#"{"notifications":[{"platform":1,"tokens":["t"],\#(fields)}]}"#.utf8)).first)
        return try GorushAPNsPayload.notification(for: notification)
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    /// Each row: the request's fields, and the whole payload gorush's builder makes of them.
    @Test(arguments: [
        (#""message":"Hello""#, #"{"aps":{"alert":"Hello"}}"#),
        (#""message":"Hello","title":"Hi""#, #"{"aps":{"alert":{"title":"Hi","body":"Hello"}}}"#),
        (#""title":"Hi""#, #"{"aps":{"alert":{"title":"Hi"}}}"#),
        // Any alert member makes a dictionary, and the plain message string is gone, as in gorush.
        (#""message":"Hello","alert":{"subtitle":"S"}"#, #"{"aps":{"alert":{"subtitle":"S"}}}"#),
        (#""alert":{"title":"A","body":"B","loc-key":"K","loc-args":["x"],"title-loc-key":"TK","title-loc-args":["y"],"action-loc-key":"AK","launch-image":"L","action":"act","summary-arg":"sa","summary-arg-count":3}"#,
         #"{"aps":{"alert":{"title":"A","body":"B","loc-key":"K","loc-args":["x"],"title-loc-key":"TK","title-loc-args":["y"],"action-loc-key":"AK","launch-image":"L","action":"act","summary-arg":"sa","summary-arg-count":3}}}"#),
        (#""badge":0"#, #"{"aps":{"badge":0}}"#),
        (#""badge":5"#, #"{"aps":{"badge":5}}"#),
        (#""badge":-1"#, #"{"aps":{}}"#),
        (#""sound":"default""#, #"{"aps":{"sound":"default"}}"#),
        (#""content_available":true,"mutable_content":true"#, #"{"aps":{"content-available":1,"mutable-content":1}}"#),
        (#""category":"C","thread-id":"T","url-args":["u"],"interruption_level":"time-sensitive""#,
         #"{"aps":{"category":"C","thread-id":"T","url-args":["u"],"interruption-level":"time-sensitive"}}"#),
        (#""data":{"encryptedMessage":"0x","chatId":"0x12","n":1,"o":{"k":[true]}}"#,
         #"{"aps":{},"encryptedMessage":"0x","chatId":"0x12","n":1,"o":{"k":[true]}}"#),
        // data.aps alone replaces the dictionary, as gorush lets it.
        (#""data":{"aps":{"alert":"raw"},"k":"v"}"#, #"{"aps":{"alert":"raw"},"k":"v"}"#),
        (#""content-state":{"score":1},"event":"update","timestamp":1700000000,"stale-date":1700000600,"dismissal-date":1700001000,"attributes-type":"Match","attributes":{"team":"A"},"relevance-score":0.5"#,
         #"{"aps":{"content-state":{"score":1},"event":"update","timestamp":1700000000,"stale-date":1700000600,"dismissal-date":1700001000,"attributes-type":"Match","attributes":{"team":"A"},"relevance-score":0.5}}"#),
    ])
    func payloadRules(_ fields: String, _ expected: String) throws {
        #expect(try Self.build(fields).payload == Self.json(expected))
    }

    /// The sound as gorush sets it (`notify/notification_apns.go` `setPayloadSound`): a string as given; an
    /// object decoded by mapstructure into gorush's `Sound` (`critical` int, `name`, `volume`, each
    /// `omitempty`, no defaults); then a top-level `name` or `volume` through apns2 v0.25.0's `SoundName` /
    /// `SoundVolume` (`payload/builder.go`), whose `aps.sound()` replaces any other sound (the string, or
    /// gorush's `Sound`, which is not apns2's type) by `{"critical":1,"name":"default","volume":1}` before
    /// setting the given key.
    @Test(arguments: [
        (#""sound":"ding""#, #""ding""#),
        (#""sound":"""#, #""""#),
        (#""sound":{"name":"bell.caf"}"#, #"{"name":"bell.caf"}"#),
        (#""sound":{"name":"bell.caf","volume":0.7,"critical":1}"#, #"{"name":"bell.caf","volume":0.7,"critical":1}"#),
        // mapstructure truncates a float into the int `critical`, skips a member of the wrong type, and
        // matches keys ignoring case; zero values are left out.
        (#""sound":{"critical":2.9,"name":7,"Volume":0.25}"#, #"{"critical":2,"volume":0.25}"#),
        (#""sound":{"critical":0,"volume":0,"name":""}"#, #"{}"#),
        (#""name":"bell.caf""#, #"{"critical":1,"name":"bell.caf","volume":1}"#),
        (#""volume":0.5"#, #"{"critical":1,"name":"default","volume":0.5}"#),
        (#""name":"bell.caf","volume":0.3"#, #"{"critical":1,"name":"bell.caf","volume":0.3}"#),
        (#""sound":"ding","name":"bell.caf""#, #"{"critical":1,"name":"bell.caf","volume":1}"#),
        (#""sound":"ding","volume":0.2"#, #"{"critical":1,"name":"default","volume":0.2}"#),
        // gorush's own `TestIOSSoundAndVolume`: the object's critical 3 and volume 4.5 are gone.
        (#""sound":{"critical":3,"name":"test","volume":4.5},"name":"foobar","volume":5.5"#, #"{"critical":1,"name":"foobar","volume":5.5}"#),
        (#""sound":{"critical":3},"volume":0.8"#, #"{"critical":1,"name":"default","volume":0.8}"#),
        // `volume` 0 (or below) and an empty `name` are not set (`setPayloadSound` checks `> 0` and length).
        (#""sound":"ding","name":"","volume":0"#, #""ding""#),
    ])
    func theSoundIsAStringGorushsSoundOrApns2sDictionary(_ fields: String, _ sound: String) throws {
        #expect(try Self.build(fields).payload == Self.json(#"{"aps":{"sound":\#(sound)}}"#))
    }

    @Test func withoutASoundThereIsNone() throws {
        #expect(try Self.build(#""volume":0,"sound":5"#).payload == Self.json(#"{"aps":{}}"#))
    }

    /// gorush sends the caller's `topic` as `apns-topic` whatever the push type (`GetIOSNotification`), and
    /// APNs refuses a VoIP push to the bare bundle id. Pushgate differs on purpose (the README lists it): a
    /// VoIP push's topic gets `.voip` when it has no such suffix; any other topic is unchanged.
    @Test(arguments: [
        ("im.example", "voip", "im.example.voip"),
        ("im.example.voip", "voip", "im.example.voip"),
        ("im.example", "alert", "im.example"),
        ("im.example", "", "im.example"),
        ("im.example.voip", "alert", "im.example.voip"),
        ("im.example", "liveactivity", "im.example"),
    ])
    func aVoIPPushToABareBundleIDGoesToItsVoIPTopic(_ topic: String, _ pushType: String, _ sent: String) throws {
        let notification = try Self.build(#""message":"m","topic":"\#(topic)","push_type":"\#(pushType)""#)
        #expect(notification.apnsTopic == sent)
        #expect(notification.apnsPushType == (pushType.isEmpty ? nil : pushType))
    }

    @Test func withoutATopicNoneIsStatedEvenForVoIP() throws {
        #expect(try Self.build(#""message":"m","push_type":"voip""#).apnsTopic == nil)
    }

    @Test func headersFollowTheRequest() throws {
        let notification = try Self.build(
            #""message":"m","topic":"im.example.voip","push_type":"voip","priority":"normal","expiration":1700000000,"apns_id":"0E3F8C2A-1B2C-4D5E-8F90-A1B2C3D4E5F6","collapse_id":"c1""#
        )
        #expect(notification.kind == .voip)
        #expect(notification.priority == .normal)
        #expect(notification.apnsTopic == "im.example.voip")
        #expect(notification.apnsPushType == "voip")
        #expect(notification.expiration == 1_700_000_000)
        #expect(notification.apnsID == "0E3F8C2A-1B2C-4D5E-8F90-A1B2C3D4E5F6")
        #expect(notification.collapseID == "c1")
    }

    /// apns2 sends `apns-push-type: alert` whenever gorush gives it no push type (`client.go`
    /// `setHeaders`), a payload that only wakes the app included.
    @Test func withoutAPushTypeEveryPushIsAnAlertAsApns2SendsIt() throws {
        #expect(try Self.build(#""content_available":true"#).kind == .alert)
        #expect(try Self.build(#""content_available":true,"data":{"k":"v"}"#).kind == .alert)
        #expect(try Self.build(#""content_available":true,"push_type":"background""#).kind == .background)
        #expect(try Self.build(#""content_available":true,"message":"m""#).kind == .alert)
        #expect(try Self.build(#""message":"m""#).kind == .alert)
        // gorush sends `apns-priority` only for `priority` normal or high (`GetIOSNotification`).
        #expect(try Self.build(#""message":"m""#).priority == nil)
        #expect(try Self.build(#""message":"m","priority":"high""#).priority == .high)
        #expect(try Self.build(#""message":"m","priority":"urgent""#).priority == nil)
        #expect(try Self.build(#""push_type":"liveactivity""#).apnsPushType == "liveactivity")
    }

    /// apns2 writes `apns-expiration` only for a time after the epoch (`client.go` `setHeaders`).
    @Test func anExpirationAtOrBeforeTheEpochIsNoExpiration() throws {
        #expect(try Self.build(#""message":"m","expiration":0"#).expiration == nil)
        #expect(try Self.build(#""message":"m","expiration":-5"#).expiration == nil)
        #expect(try Self.build(#""message":"m","expiration":1"#).expiration == 1)
        #expect(try Self.build(#""message":"m""#).expiration == nil)
    }

    @Test func dataApsBesideAlertFieldsIsRefusedClearly() throws {
        #expect(throws: GorushAPNsPayload.Refusal.self) { try Self.build(#""title":"t","data":{"aps":{"badge":1}}"#) }
    }

    /// Both generations of status-go's call (`protocol/pushnotificationserver/gorush.go`).
    @Test func statusGosPayloadsReachTheDeviceAsStatusMobileReadsThem() throws {
        let old = try Self.build(#""message":"You have a new message","topic":"im.status.ethereum.pr","data":{"encryptedMessage":"0xabcd","chatId":"0x01","publicKey":"0x04ff"}"#)
        #expect(old.payload == (try Self.json(#"{"aps":{"alert":"You have a new message"},"encryptedMessage":"0xabcd","chatId":"0x01","publicKey":"0x04ff"}"#)))
        #expect(old.apnsTopic == "im.status.ethereum.pr")
        let new = try Self.build(
            #""message":"New message in Messenger","topic":"im.status.ethereum.pr","content_available":true,"sound":"default","priority":"high","push_type":"alert","data":{"encryptedMessage":"0x","chatId":"0x01","publicKey":"0x04ff","deepLink":"status-app://chats"}"#
        )
        #expect(
            new.payload
                == (try Self.json(
                    #"{"aps":{"alert":"New message in Messenger","content-available":1,"sound":"default"},"encryptedMessage":"0x","chatId":"0x01","publicKey":"0x04ff","deepLink":"status-app://chats"}"#
                ))
        )
        #expect(new.kind == .alert)
        #expect(new.priority == .high)
    }
}
