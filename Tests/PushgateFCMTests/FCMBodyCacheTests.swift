import PushgateCore
@testable import PushgateFCM
import Testing

/// The cached bodies must be the bytes the message encodes to for each token, whatever came before.
@Suite("FCM request bodies from a notification's template")
struct FCMBodyCacheTests {
    static let notifications: [PushNotification] = [
        PushNotification(payload: .object(["notification": .object(["title": .string("Hi"), "body": .string("a \"quoted\" token: tok")])])),
        PushNotification(priority: .normal, payload: .object(["data": .object(["k": .string("v"), "n": .string("1")])]), timeToLive: 30, collapseID: "c"),
        PushNotification(payload: .object(["topic": .string("news"), "data": .object(["k": .string("v")])])),
        PushNotification(payload: .object(["condition": .string("'a' in topics"), "notification": .object(["title": .string("T")])])),
        PushNotification(payload: .object(["data": .object(["ünï": .string("é"), "x": .number(1.5)])])),
        PushNotification(payload: .object(["android": .object(["priority": .string("NORMAL"), "collapse_key": .string("k")]), "token": .string("overridden")])),
        PushNotification(payload: .string("not an object")),
    ]

    static let tokens = [
        "fGx1:APA91bH-abc_DEF", "second-token", "a\"quote", "back\\slash", "ünicode", "", "pushgate-token-00", "tok",
    ]

    static func expected(_ notification: PushNotification, _ token: String) -> [UInt8]? {
        guard let message = FCMMessage.body(notification: notification, token: token) else { return nil }
        return try? JSONText.encode(message)
    }

    /// What the front end left out is not added: no `android` section for a notification that states no
    /// priority, time to live or collapse id (gorush sends none then), and only the stated members when it
    /// states some.
    @Test func nothingTheFrontEndLeftOutIsAdded() throws {
        let data: JSONValue = ["data": ["k": "v"]]
        #expect(FCMMessage.body(notification: PushNotification(payload: data), token: "t") == ["message": ["data": ["k": "v"], "token": "t"]])
        #expect(
            FCMMessage.body(notification: PushNotification(kind: .background, payload: data), token: "t")
                == ["message": ["data": ["k": "v"], "token": "t"]]
        )
        #expect(
            FCMMessage.body(notification: PushNotification(payload: data, timeToLive: 30), token: "t")
                == ["message": ["data": ["k": "v"], "android": ["ttl": "30s"], "token": "t"]]
        )
        #expect(
            FCMMessage.body(notification: PushNotification(priority: .high, payload: data, collapseID: "c"), token: "t")
                == ["message": ["data": ["k": "v"], "android": ["priority": "HIGH", "collapse_key": "c"], "token": "t"]]
        )
        // A stated field wins over the payload's nothing, and the payload's own member over a stated one.
        #expect(
            FCMMessage.body(notification: PushNotification(priority: .high, payload: ["android": ["ttl": "5s"]], timeToLive: 60), token: "t")
                == ["message": ["android": ["ttl": "5s", "priority": "HIGH"], "token": "t"]]
        )
    }

    @Test func everyBodyIsTheDirectEncodingWhateverTheOrder() {
        let cache = FCMBodyCache()
        var generator = SystemRandomNumberGenerator()
        // Runs of one notification (as the outbox hands them over) mixed with interleaving.
        for round in 0..<400 {
            let notification = round % 3 == 0
                ? Self.notifications.randomElement(using: &generator)!
                : Self.notifications[(round / 7) % Self.notifications.count]
            let token = Self.tokens.randomElement(using: &generator)!
            #expect(cache.body(for: notification, token: token) == Self.expected(notification, token), "round \(round)")
        }
    }

    @Test func theThirdTokenOfANotificationUsesItsTemplate() {
        let cache = FCMBodyCache()
        let notification = Self.notifications[1]
        for token in ["one", "two", "three", "four"] {
            #expect(cache.body(for: notification, token: token) == Self.expected(notification, token))
        }
        #expect(FCMBodyCache.split(Array(#"{"a":"X","b":"X"}"#.utf8), at: Array(#""X""#.utf8)) == nil)
        let split = FCMBodyCache.split(Array(#"{"a":"X","b":1}"#.utf8), at: Array(#""X""#.utf8))
        #expect(split.map { String(decoding: $0.prefix, as: UTF8.self) } == #"{"a":"#)
        #expect(split.map { String(decoding: $0.suffix, as: UTF8.self) } == #","b":1}"#)
    }
}
