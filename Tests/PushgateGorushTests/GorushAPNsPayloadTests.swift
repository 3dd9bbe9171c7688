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
        (#""sound":{"name":"bell.caf","volume":0.7,"critical":1}"#, #"{"aps":{"sound":{"name":"bell.caf","volume":0.7,"critical":1}}}"#),
        (#""name":"bell.caf","volume":0.3"#, #"{"aps":{"sound":{"name":"bell.caf","volume":0.3}}}"#),
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

    @Test func withoutAPushTypeASilentPayloadIsABackgroundPushAndAnAlertIsAnAlert() throws {
        #expect(try Self.build(#""content_available":true"#).kind == .background)
        #expect(try Self.build(#""content_available":true,"message":"m""#).kind == .alert)
        #expect(try Self.build(#""message":"m""#).kind == .alert)
        // gorush sends `apns-priority` only for `priority` normal or high (`GetIOSNotification`).
        #expect(try Self.build(#""message":"m""#).priority == nil)
        #expect(try Self.build(#""message":"m","priority":"high""#).priority == .high)
        #expect(try Self.build(#""message":"m","priority":"urgent""#).priority == nil)
        #expect(try Self.build(#""push_type":"liveactivity""#).apnsPushType == "liveactivity")
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
