import Foundation
import PushgateCore
@testable import PushgateMatrix
import Testing

@Suite("Matrix → APNs payloads")
struct APNsMatrixPayloadTests {
    static func payload(_ notification: MatrixNotification, data: [String: JSONValue] = [:], sendBadgeCounts: Bool = true) -> MatrixPayload {
        var device = notification.devices[0]
        device.data = data
        return APNsMatrixPayloadBuilder.payload(for: notification, device: device, sendBadgeCounts: sendBadgeCounts)
    }

    @Test func sygnalsExpectedFullPayload() throws {
        let expected = try MatrixFixtures.json(#"""
            {"room_id":"!slw48wfj34rtnrf:example.com","event_id":"$qTOWWTEL48yPm3uT-gdNhFcoHxfKbZuqRVnnWWSkGBs",
             "aps":{"alert":{"loc-key":"MSG_FROM_USER_IN_ROOM_WITH_CONTENT","loc-args":["Major Tom","Mission Control","I'm floating in a most peculiar way."]},"badge":3}}
            """#)
        #expect(Self.payload(MatrixFixtures.majorTom()) == .send(expected))
    }

    @Test func synapseFullFormatMergesDefaultPayload() throws {
        let notification = try MatrixFixtures.parse(MatrixFixtures.fullFormat)
        let expected = try MatrixFixtures.json(#"""
            {"room_id":"!HWLK:localhost","event_id":"$5YeC",
             "aps":{"mutable-content":1,"alert":{"loc-key":"MSG_FROM_USER_IN_ROOM_WITH_CONTENT","loc-args":["alice","Mission Control","@bob hello there"]},"badge":1}}
            """#)
        #expect(APNsMatrixPayloadBuilder.payload(for: notification, device: notification.devices[0]) == .send(expected))
    }

    @Test func eventIDOnlyPutsCountsAtTheTopAndNoBadge() throws {
        let notification = try MatrixFixtures.parse(MatrixFixtures.eventIDOnly)
        let expected = try MatrixFixtures.json(#"{"room_id":"!HWLK:localhost","event_id":"$2oKk","unread_count":1}"#)
        #expect(APNsMatrixPayloadBuilder.payload(for: notification, device: notification.devices[0]) == .send(expected))
        #expect(APNsMatrixPayloadBuilder.payload(for: notification, device: notification.devices[0], sendBadgeCounts: false)
            == .send(try MatrixFixtures.json(#"{"room_id":"!HWLK:localhost","event_id":"$2oKk"}"#)))
    }

    @Test func eventIDOnlyKeepsTheDefaultPayloadsAps() throws {
        var notification = MatrixFixtures.majorTom(type: nil, content: nil)
        notification.missedCalls = nil
        let data: [String: JSONValue] = [
            "format": "event_id_only",
            "default_payload": try MatrixFixtures.json(#"{"aps":{"mutable-content":1,"alert":{"loc-key":"SINGLE_UNREAD","loc-args":[]}}}"#),
        ]
        let expected = try MatrixFixtures.json(#"""
            {"room_id":"!slw48wfj34rtnrf:example.com","event_id":"$qTOWWTEL48yPm3uT-gdNhFcoHxfKbZuqRVnnWWSkGBs","unread_count":2,
             "aps":{"alert":{"loc-key":"SINGLE_UNREAD","loc-args":[]},"mutable-content":1}}
            """#)
        #expect(Self.payload(notification, data: data) == .send(expected))
    }

    @Test func badgeOnlyUpdatesIgnoreDefaultPayloadAndClearToZero() throws {
        let notification = try MatrixFixtures.parse(MatrixFixtures.badgeOnly)
        #expect(APNsMatrixPayloadBuilder.payload(for: notification, device: notification.devices[0])
            == .send(try MatrixFixtures.json(#"{"aps":{"badge":0}}"#)))
        var two = notification
        two.unread = 2
        #expect(APNsMatrixPayloadBuilder.payload(for: two, device: two.devices[0]) == .send(try MatrixFixtures.json(#"{"aps":{"badge":2}}"#)))
    }

    @Test(arguments: [
        ("m.room.message", ["msgtype": "m.image", "body": "cat.png"], "Room", "IMAGE_FROM_USER_IN_ROOM", ["Tom", "cat.png", "Room"]),
        ("m.room.message", ["msgtype": "m.text", "body": "hi"], "Room", "MSG_FROM_USER_IN_ROOM_WITH_CONTENT", ["Tom", "Room", "hi"]),
        ("m.room.message", ["msgtype": "m.notice", "body": "hi"], "Room", "MSG_FROM_USER_IN_ROOM_WITH_CONTENT", ["Tom", "Room", "hi"]),
        ("m.room.message", ["msgtype": "m.emote", "body": "waves"], "Room", "ACTION_FROM_USER_IN_ROOM", ["Room", "Tom", "waves"]),
        ("m.room.encrypted", ["algorithm": "m.megolm.v1.aes-sha2"], "Room", "MSG_FROM_USER_IN_ROOM", ["Tom", "Room"]),
        ("m.room.message", ["msgtype": "m.image", "body": "cat.png"], nil, "IMAGE_FROM_USER", ["Tom", "cat.png"]),
        ("m.room.message", ["msgtype": "m.text", "body": "hi"], nil, "MSG_FROM_USER_WITH_CONTENT", ["Tom", "hi"]),
        ("m.room.message", ["msgtype": "m.emote", "body": "waves"], nil, "ACTION_FROM_USER", ["Tom", "waves"]),
        ("m.room.encrypted", [:], nil, "MSG_FROM_USER", ["Tom"]),
        ("m.call.invite", ["offer": ["sdp": "v=0\r\nm=audio 9\r\nm=video 9"]], "Room", "VIDEO_CALL_FROM_USER", ["Tom"]),
        ("m.call.invite", ["offer": ["sdp": "v=0\r\nm=audio 9"]], "Room", "VOICE_CALL_FROM_USER", ["Tom"]),
        ("m.sticker", [:], "Room", "MSG_FROM_USER", ["Tom"]),
        // An empty body is no content to Sygnal (Python's truthiness), but for an image.
        ("m.room.message", ["msgtype": "m.text", "body": ""], "Room", "MSG_FROM_USER_IN_ROOM", ["Tom", "Room"]),
        ("m.room.message", ["msgtype": "m.emote", "body": ""], "Room", "MSG_FROM_USER_IN_ROOM", ["Tom", "Room"]),
        ("m.room.message", ["msgtype": "m.text", "body": ""], nil, "MSG_FROM_USER", ["Tom"]),
        ("m.room.message", ["msgtype": "m.image", "body": ""], nil, "IMAGE_FROM_USER", ["Tom", ""]),
    ] as [(String, [String: JSONValue], String?, String, [String])])
    func locKeyTable(type: String, content: [String: JSONValue], room: String?, key: String, arguments: [String]) {
        var notification = MatrixFixtures.majorTom(type: type, content: content)
        notification.senderDisplayName = "Tom"
        notification.roomName = room
        guard case .send(let body) = Self.payload(notification) else {
            Issue.record("expected a payload")
            return
        }
        #expect(body["aps"]?["alert"] == .object(["loc-key": .string(key), "loc-args": .array(arguments.map(JSONValue.string))]))
    }

    @Test func invitesNameTheRoomOrTheChatAndOtherMemberEventsSendNothingButTheBadge() {
        var invite = MatrixFixtures.majorTom(type: "m.room.member", content: ["membership": "invite"])
        invite.userIsTarget = true
        invite.membership = "invite"
        guard case .send(let named) = Self.payload(invite) else { Issue.record("expected a payload"); return }
        #expect(named["aps"]?["alert"]?["loc-key"] == "USER_INVITE_TO_NAMED_ROOM")
        #expect(named["aps"]?["alert"]?["loc-args"] == .array(["Major Tom", "Mission Control"]))
        invite.roomName = nil
        guard case .send(let chat) = Self.payload(invite) else { Issue.record("expected a payload"); return }
        #expect(chat["aps"]?["alert"]?["loc-key"] == "USER_INVITE_TO_CHAT")

        var join = MatrixFixtures.majorTom(type: "m.room.member", content: ["membership": "join"])
        join.membership = "join"
        join.unread = nil
        join.missedCalls = nil
        guard case .skip = Self.payload(join) else { Issue.record("a non-target member event without counts sends nothing"); return }
    }

    @Test func senderFallsBackToTheIdThenASpace() {
        var notification = MatrixFixtures.majorTom()
        notification.senderDisplayName = nil
        guard case .send(let byID) = Self.payload(notification) else { Issue.record("expected a payload"); return }
        #expect(byID["aps"]?["alert"]?["loc-args"] == .array(["@exampleuser:matrix.org", "Mission Control", "I'm floating in a most peculiar way."]))
        notification.sender = nil
        guard case .send(let anonymous) = Self.payload(notification) else { Issue.record("expected a payload"); return }
        #expect(anonymous["aps"]?["alert"]?["loc-args"] == .array([" ", "Mission Control", "I'm floating in a most peculiar way."]))
    }

    @Test func aNonObjectDefaultPayloadRejectsThePushkey() {
        #expect(Self.payload(MatrixFixtures.majorTom(), data: ["default_payload": "nope"]) == .reject(reason: "default_payload is not an object"))
    }

    /// Sygnal rejects `default_payload: null` too (so the homeserver deletes the pusher); Pushgate takes it
    /// as absent, deliberately.
    @Test func aNullDefaultPayloadIsTakenAsAbsent() {
        #expect(Self.payload(MatrixFixtures.majorTom(), data: ["default_payload": .null]) == Self.payload(MatrixFixtures.majorTom(), data: [:]))
        guard case .send = Self.payload(MatrixFixtures.majorTom(), data: ["default_payload": .null]) else {
            Issue.record("expected a payload")
            return
        }
    }

    @Test func sendBadgeCountsFalseLeavesTheBadgeOut() {
        guard case .send(let body) = Self.payload(MatrixFixtures.majorTom(), sendBadgeCounts: false) else { Issue.record("expected a payload"); return }
        #expect(body["aps"]?["badge"] == nil)
    }

    @Test func longBodiesAreCutToExactly4096Bytes() throws {
        let notification = MatrixFixtures.majorTom(content: ["msgtype": "m.text", "body": .string(String(repeating: "x", count: 5000))])
        guard case .send(let body) = Self.payload(notification) else { Issue.record("expected a payload"); return }
        #expect(try body.encoded().count == 4096)
    }

    @Test func twoLongArgumentsAreShortenedEvenly() throws {
        func alert(_ first: String, _ second: String) -> JSONValue {
            .object(["aps": .object(["alert": .object(["loc-key": "MSG_FROM_USER_IN_ROOM", "loc-args": .array([.string(first), .string(second)])])])])
        }
        let limit = try alert("", "").encoded().count + 100
        let fitted = try #require(APNsPayloadTruncation.fit(alert(String(repeating: "a", count: 100), String(repeating: "b", count: 100)), maximumSize: limit))
        #expect(fitted == alert(String(repeating: "a", count: 50), String(repeating: "b", count: 50)))
        #expect(try fitted.encoded().count == limit)
    }

    @Test func truncationCutsWholeCodePoints() throws {
        let empty = JSONValue.object(["aps": .object(["alert": .string("")])])
        let room = 20
        let limit = try empty.encoded().count + room
        let rabbit = JSONValue.object(["aps": .object(["alert": .string("🐰" + String(repeating: "a", count: 30))])])
        let fitted = try #require(APNsPayloadTruncation.fit(rabbit, maximumSize: limit))
        #expect(fitted["aps"]?["alert"]?.stringValue?.unicodeScalars.count == 17)
        let emoji = JSONValue.object(["aps": .object(["alert": .string(String(repeating: "🐰", count: 20))])])
        let fittedEmoji = try #require(APNsPayloadTruncation.fit(emoji, maximumSize: try empty.encoded().count + 30))
        #expect(fittedEmoji["aps"]?["alert"]?.stringValue == String(repeating: "🐰", count: 7))
        // Nothing choppable: not sendable.
        let big = JSONValue.object(["blob": .string(String(repeating: "z", count: 5000))])
        #expect(APNsPayloadTruncation.fit(big, maximumSize: 4096) == nil)
    }

    @Test func senderAndRoomNamesKeepTheirFirst1024CodePoints() {
        // Multi-byte text under the limit in code points but over it in bytes is kept whole.
        let accented = String(repeating: "é", count: 1024)
        #expect(MatrixText.prefix(accented, codePoints: 1024) == accented)
        #expect(MatrixText.prefix(accented + "é", codePoints: 1024) == accented)
        #expect(MatrixText.prefix(String(repeating: "a", count: 1030), codePoints: 1024) == String(repeating: "a", count: 1024))
        // Code points, not characters: a letter and its combining accent are two.
        #expect(MatrixText.prefix(String(repeating: "e\u{301}", count: 600), codePoints: 1024).unicodeScalars.count == 1024)
        #expect(MatrixText.prefix("short", codePoints: 1024) == "short")
    }
}
