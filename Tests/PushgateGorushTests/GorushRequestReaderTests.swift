import PushgateConfig
import PushgateCore
@testable import PushgateGorush
import Testing

@Suite("gorush requests: reading the body as gorush's binding does")
struct GorushRequestReaderTests {
    static func read(_ text: String) throws(GorushRequestReader.Unreadable) -> [GorushNotification] {
        try GorushRequestReader.notifications(Array(text.utf8))
    }

    /// Go's encoding/json, which gorush's binding uses, reads a lone surrogate escape and invalid UTF-8 in a
    /// string as U+FFFD: a caller's preview cut inside an emoji is delivered, not refused with a 400.
    @Test func textCutInsideAnEmojiIsReadAsGoReadsIt() throws {
        let escaped = try Self.read(#"{"notifications":[{"platform":2,"tokens":["t"],"message":"hi \ud83d","title":"\ude00x\ud83d\u0041"}]}"#)
        #expect(escaped.first?.message == "hi \u{FFFD}")
        #expect(escaped.first?.title == "\u{FFFD}x\u{FFFD}A")
        var raw = Array(#"{"notifications":[{"platform":2,"tokens":["t"],"message":"cut "#.utf8)
        raw += [0xF0, 0x9F, 0x98]  // the first three bytes of U+1F600
        raw += Array(#""}]}"#.utf8)
        // (Go writes a U+FFFD for each byte of a cut sequence; Swift one for the sequence.)
        let cut = try GorushRequestReader.notifications(raw)
        #expect(cut.first?.message == "cut \u{FFFD}")
        // A whole pair is still one character.
        #expect(try Self.read(#"{"notifications":[{"platform":2,"tokens":["t"],"message":"\ud83d\ude00"}]}"#).first?.message == "\u{1F600}")
    }

    /// The request body limit takes gorush's largest request: 100 notifications (its default
    /// `max_notification`), each with 500 FCM tokens of FCM's length and a 4-KiB message.
    @Test func theBodyLimitTakesGorushsLargestRequest() throws {
        let tokens = (0..<500).map { index in
            let digits = String(index)
            return "\"" + String(repeating: "f", count: 163 - digits.count) + digits + "\""
        }.joined(separator: ",")
        let notification = #"{"tokens":[\#(tokens)],"platform":2,"message":"\#(String(repeating: "m", count: 4096))","title":"t","data":{"k":"v"}}"#
        let body = #"{"notifications":["# + Array(repeating: notification, count: 100).joined(separator: ",") + "]}"
        #expect(body.utf8.count <= GorushSettings().requestBodyLimit, "\(body.utf8.count) bytes")
        let read = try Self.read(body)
        #expect(read.count == 100 && read.allSatisfy { $0.tokens.count == 500 })
    }

    @Test(arguments: [
        "not json", "[]", "{}", #"{"notifications":null}"#, #"{"notifications":{}}"#, #"{"notifications":[1]}"#,
        #"{"notifications":[{"platform":"1"}]}"#, #"{"notifications":[{"tokens":"abc"}]}"#, #"{"notifications":[{"tokens":[1]}]}"#,
        #"{"notifications":[{"platform":1.5}]}"#, #"{"notifications":[{"badge":true}]}"#, #"{"notifications":[{"data":[]}]}"#,
        #"{"notifications":[{"content_available":"yes"}]}"#, #"{"notifications":[{"alert":{"loc-args":"x"}}]}"#,
        #"{"notifications":[{"android":"high"}]}"#, #"{"notifications":[{"huawei_collapse_key":"1"}]}"#,
        // `notification` is firebase-admin-go's `messaging.Notification`: its three members are strings.
        #"{"notifications":[{"notification":{"title":1}}]}"#, #"{"notifications":[{"notification":{"image":["x"]}}]}"#,
    ])
    func whatGorushsBindingRefusesIsUnreadable(_ body: String) {
        #expect(throws: GorushRequestReader.Unreadable.self) { try Self.read(body) }
    }

    @Test func fieldsAreReadWithGorushsNamesAndZeroValues() throws {
        let notifications = try Self.read(#"""
            {"notifications":[{"notif_id":"n1","tokens":["t1","t2"],"platform":1,"message":"m","title":"t","badge":0,
              "thread-id":"th","url-args":["a"],"expiration":1700000000,"apns_id":"A","collapse_id":"c","push_type":"alert",
              "alert":{"subtitle":"s","loc-args":["x"],"summary-arg-count":2,"unknown":1},"name":"ding","volume":0.5,
              "Topic":"im.example","unknown_field":{"x":[1]},"sound":null}, null]}
            """#)
        #expect(notifications.count == 2)
        let first = notifications[0]
        #expect(first.notifID == "n1")
        #expect(first.tokens == ["t1", "t2"])
        #expect(first.platform == 1)
        #expect(first.badge == 0)
        #expect(first.threadID == "th")
        #expect(first.urlArgs == ["a"])
        #expect(first.expiration == 1_700_000_000)
        #expect(first.alert == ["subtitle": "s", "loc-args": ["x"], "summary-arg-count": 2])
        #expect(first.soundName == "ding")
        #expect(first.soundVolume == 0.5)
        // Go matches a key that differs only in case.
        #expect(first.topic == "im.example")
        #expect(first.sound == nil)
        #expect(notifications[1] == GorushNotification())
        #expect(notifications[1].badge == nil)
    }

    /// Members `messaging.Notification` does not have are ignored whatever their type, as Go ignores
    /// unknown keys.
    @Test func theNotificationObjectIsReadAsFirebasesNotification() throws {
        let notifications = try Self.read(#"{"notifications":[{"platform":2,"notification":{"Title":"t","icon":1,"color":{"x":[]},"image":"i"}},{"platform":2}]}"#)
        #expect(notifications.map(\.notification) == [["title": "t", "image": "i"], nil])
    }

    @Test func countsAreTokensPlusOneForATopic() throws {
        let notifications = try Self.read(#"{"notifications":[{"tokens":["a","b"],"platform":1,"topic":"x"},{"tokens":["c"],"platform":2}]}"#)
        #expect(notifications.map(\.countedTargets) == [3, 1])
    }
}
