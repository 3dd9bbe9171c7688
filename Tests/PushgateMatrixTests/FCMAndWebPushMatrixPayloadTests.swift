import Foundation
import PushgateCore
@testable import PushgateMatrix
import Testing

@Suite("Matrix → FCM and Web Push payloads")
struct FCMAndWebPushMatrixPayloadTests {
    @Test func fcmDataIsFlatAndAllStrings() throws {
        let notification = try MatrixFixtures.parse(MatrixFixtures.fullFormat)
        guard case .send(let message) = FCMMatrixPayloadBuilder.payload(for: notification, device: notification.devices[0]) else {
            Issue.record("expected a message")
            return
        }
        let expected = try MatrixFixtures.json(#"""
            {"data":{"aps":"{\"mutable-content\":1}","event_id":"$5YeC","type":"m.room.message","sender":"@alice:localhost",
              "room_name":"Mission Control","sender_display_name":"alice","content_body":"@bob hello there","content_msgtype":"m.text",
              "room_id":"!HWLK:localhost","prio":"high","unread":"1"},
             "android":{"priority":"high"}}
            """#)
        #expect(message == expected)
    }

    @Test func fcmClearsBadgesWithZeroAndDropsNonStringContent() throws {
        let badge = try MatrixFixtures.parse(MatrixFixtures.badgeOnly)
        guard case .send(let message) = FCMMatrixPayloadBuilder.payload(for: badge, device: badge.devices[0]) else {
            Issue.record("a badge-clearing update must be sent")
            return
        }
        #expect(message["data"]?["unread"] == "0")
        #expect(message["data"]?["sender"] == "")

        var invite = MatrixFixtures.majorTom(type: "m.room.member", content: ["membership": "invite", "is_direct": true, "displayname": "Tom"])
        invite.prio = "low"
        guard case .send(let inviteMessage) = FCMMatrixPayloadBuilder.payload(for: invite, device: invite.devices[0]) else {
            Issue.record("expected a message")
            return
        }
        #expect(inviteMessage["data"]?["content_is_direct"] == nil)
        #expect(inviteMessage["data"]?["content_displayname"] == "Tom")
        #expect(inviteMessage["data"]?["prio"] == "normal")
        #expect(inviteMessage["android"]?["priority"] == "normal")
        #expect(inviteMessage["data"]?["missed_calls"] == "1")
    }

    @Test func fcmFieldsAreCutTo1024BytesWithAnEllipsis() {
        let notification = MatrixFixtures.majorTom(content: ["msgtype": "m.text", "body": .string(String(repeating: "é", count: 1000))])
        guard case .send(let message) = FCMMatrixPayloadBuilder.payload(for: notification, device: notification.devices[0]),
            let body = message["data"]?["content_body"]?.stringValue
        else { Issue.record("expected a message"); return }
        #expect(body.hasSuffix("…"))
        #expect(body.utf8.count <= 1024)
        #expect(body.utf8.count >= 1021)
    }

    @Test func fcmSendsNothingWithoutRoomEventOrCounts() {
        var notification = MatrixFixtures.majorTom()
        notification.eventID = nil
        notification.roomID = nil
        notification.unread = nil
        notification.missedCalls = nil
        guard case .skip = FCMMatrixPayloadBuilder.payload(for: notification, device: notification.devices[0]) else {
            Issue.record("expected nothing to be sent")
            return
        }
    }

    static let webDevice = MatrixDevice(
        appID: "im.example.web", pushkey: "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM", pushkeyTS: nil,
        data: ["endpoint": "https://push.example.org/sub/1", "auth": "tBHItJI5svbpez7KI4CCXg", "account": "x"], tweaks: nil
    )

    @Test func webPushPayloadMatchesSygnals() throws {
        var device = Self.webDevice
        device.data?["default_payload"] = .object(["account": "x"])
        let notification = MatrixNotification(
            eventID: "$ev1", roomID: "!room:example.org", type: "m.room.message", sender: "@a:example.org", senderDisplayName: "Alice",
            roomName: "Room", roomAlias: nil, userIsTarget: true, prio: "high",
            content: ["msgtype": "m.text", "body": "hello", "formatted_body": "<b>hello</b>"], membership: "join", unread: 0, missedCalls: 1,
            devices: [device]
        )
        guard case .success(let message)? = WebPushMatrixPayloadBuilder.message(for: notification, device: device) else {
            Issue.record("expected a message")
            return
        }
        let expected = try MatrixFixtures.json(#"""
            {"account": "x", "room_id": "!room:example.org", "room_name": "Room", "membership": "join", "event_id": "$ev1",
             "sender": "@a:example.org", "sender_display_name": "Alice", "user_is_target": true, "type": "m.room.message",
             "unread": 0, "missed_calls": 1, "content": {"msgtype": "m.text", "body": "hello"}}
            """#)
        #expect(message.payload == expected)
        let subscription = try MatrixFixtures.json(message.subscription)
        #expect(subscription["endpoint"] == "https://push.example.org/sub/1")
        #expect(subscription["keys"]?["p256dh"]?.stringValue == device.pushkey)
        #expect(subscription["keys"]?["auth"] == "tBHItJI5svbpez7KI4CCXg")
        #expect(message.topic == nil)
        #expect(message.urgency == .normal)
    }

    /// Sygnal's `Urgency`: `low` for `prio: low`, else `normal` (never `high`, which RFC 8030 keeps for
    /// calls).
    @Test(arguments: [("low", WebPushUrgency.low), ("high", .normal), (nil, .normal)] as [(String?, WebPushUrgency)])
    func webPushUrgencyFollowsPrioAsSygnals(_ prio: String?, _ urgency: WebPushUrgency) throws {
        var notification = MatrixFixtures.majorTom()
        notification.prio = prio
        guard case .success(let message)? = WebPushMatrixPayloadBuilder.message(for: notification, device: Self.webDevice) else {
            Issue.record("expected a message")
            return
        }
        #expect(message.urgency == urgency)
    }

    @Test func nonObjectDefaultPayloadsAreIgnoredForWebPushAndNullIsAbsentEverywhere() throws {
        let notification = MatrixFixtures.majorTom()
        for value: JSONValue in [.null, "text", [1], 2] {
            var device = Self.webDevice
            device.data?["default_payload"] = value
            guard case .success(let message)? = WebPushMatrixPayloadBuilder.message(for: notification, device: device) else {
                Issue.record("a non-object default_payload must not refuse a Web Push pusher")
                continue
            }
            #expect(message.payload["room_id"] == .string(notification.roomID ?? ""))
        }
        var fcmDevice = notification.devices[0]
        fcmDevice.data = ["default_payload": .null]
        guard case .send = FCMMatrixPayloadBuilder.payload(for: notification, device: fcmDevice) else {
            Issue.record("default_payload: null must be taken as absent for FCM")
            return
        }
        fcmDevice.data = ["default_payload": "text"]
        #expect(FCMMatrixPayloadBuilder.payload(for: notification, device: fcmDevice) == .reject(reason: "default_payload is not an object"))
    }

    /// The subscription handed to the Web Push back end is the text `JSONText` writes for the same object
    /// (sorted keys, escapes, slashes and non-ASCII as they are), byte for byte.
    @Test(arguments: [
        ("https://push.example.org/sub/1", "tBHItJI5svbpez7KI4CCXg"),
        ("https://push.example.org/w?a=\"q\"&b=\\x", "a\u{1}b"),
        ("https://pûsh.example/é/😀", ""),
    ])
    func webPushSubscriptionIsTheObjectsJSONText(endpoint: String, auth: String) throws {
        var device = Self.webDevice
        device.data?["endpoint"] = .string(endpoint)
        device.data?["auth"] = .string(auth)
        guard case .success(let subscription) = WebPushMatrixPayloadBuilder.subscription(for: device) else {
            Issue.record("expected a subscription")
            return
        }
        let object: JSONValue = ["endpoint": .string(endpoint), "keys": ["p256dh": .string(device.pushkey), "auth": .string(auth)]]
        #expect(Array(subscription.utf8) == (try object.encodedByFoundation()))
    }

    /// Sygnal counts and cuts `body` in code points (Python's `len` and slicing): 600 "e" + combining acute
    /// pairs are 1,200 code points (600 characters to Swift), cut to 999 of them and "…", which splits
    /// the last pair as Python does. Known answer: `("e\u0301" * 600)[:999] + "…"`.
    @Test func webPushCutsTheBodyInCodePointsAsSygnalDoes() throws {
        let notification = MatrixFixtures.majorTom(content: ["msgtype": "m.text", "body": .string(String(repeating: "e\u{301}", count: 600))])
        guard case .success(let message)? = WebPushMatrixPayloadBuilder.message(for: notification, device: Self.webDevice) else {
            Issue.record("expected a message")
            return
        }
        let body = try #require(message.payload["content"]?["body"]?.stringValue)
        let expected = String(repeating: "e\u{301}", count: 499) + "e…"
        #expect(Array(body.unicodeScalars) == Array(expected.unicodeScalars))
        #expect(body.unicodeScalars.count == 1000)
    }

    @Test func webPushTrimsLongContentAndHashesTheRoomIntoTheTopic() throws {
        var device = Self.webDevice
        device.data?["only_last_per_room"] = true
        var notification = MatrixFixtures.majorTom(content: [
            "msgtype": "m.text", "body": .string(String(repeating: "w", count: 1001)), "ciphertext": .string(String(repeating: "c", count: 2001)),
        ])
        notification.roomID = "!HWLKabc:localhost"
        guard case .success(let message)? = WebPushMatrixPayloadBuilder.message(for: notification, device: device) else {
            Issue.record("expected a message")
            return
        }
        #expect(message.payload["content"]?["body"]?.stringValue == String(repeating: "w", count: 999) + "…")
        #expect(message.payload["content"]?["ciphertext"] == nil)
        // Known answer from Python's hashlib: urlsafe_b64encode(blake2s(b"!HWLKabc:localhost", digest_size=22)),
        // padding kept: 32 characters ending "==", sent as the Topic unchanged.
        #expect(message.topic == "RURl-mGrL3Gtdl-_0CCD3j0bD8MwkA==")
        #expect(message.topic?.count == 32)
        // About a kilobyte of content: no smaller form is stated.
        #expect(message.reducedPayload == nil)
    }

    /// A long content (1,000 characters of two bytes each, emoji of four) may take the payload over Web
    /// Push's 3993 bytes: the payload without `content` is stated beside it, for the back end to send then.
    @Test func webPushStatesAPayloadWithoutContentWhenTheContentIsLong() throws {
        let notification = MatrixFixtures.majorTom(content: ["msgtype": "m.text", "body": .string(String(repeating: "😀", count: 1000))])
        guard case .success(let message)? = WebPushMatrixPayloadBuilder.message(for: notification, device: Self.webDevice) else {
            Issue.record("expected a message")
            return
        }
        guard case .object(var full) = message.payload else {
            Issue.record("expected an object")
            return
        }
        #expect(full.removeValue(forKey: "content") != nil)
        #expect(message.reducedPayload == .object(full))
        #expect(try JSONText.encode(message.payload).count > 3993)
    }

    @Test func webPushEventsOnlyPushersSkipBadgeUpdatesAndIncompletePushersAreRefused() throws {
        var device = Self.webDevice
        device.data?["events_only"] = true
        let badge = try MatrixFixtures.parse(MatrixFixtures.badgeOnly)
        #expect(WebPushMatrixPayloadBuilder.message(for: badge, device: device) == nil)
        var incomplete = Self.webDevice
        incomplete.data?["auth"] = nil
        guard case .failure? = WebPushMatrixPayloadBuilder.message(for: MatrixFixtures.majorTom(), device: incomplete) else {
            Issue.record("a pusher without auth must be refused")
            return
        }
    }

    @Test func blake2sKnownAnswers() {
        // RFC 7693 Appendix B: BLAKE2s-256("abc").
        #expect(BLAKE2s.hash(Array("abc".utf8), digestSize: 32).map { String(format: "%02x", $0) }.joined()
            == "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982")
        // A multi-block input, from Python's hashlib.
        #expect(Base64URLPadded.encode(BLAKE2s.hash(Array(repeating: UInt8(ascii: "x"), count: 200), digestSize: 22)) == "EUYOPQQE9A3cTjmnKwRgIk2y-Iwtkw==")
    }
}
