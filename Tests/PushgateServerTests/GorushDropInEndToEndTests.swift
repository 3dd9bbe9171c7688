import Foundation
import PushgateCore
import PushgateTestSupport
import Testing

/// gorush's callers against the real `pushgate` binary and the sandbox's emulators: the complete provider
/// request (the body, and APNs' `apns-*` headers) and the answer for the cases where gorush v1.22.0's
/// behaviour is easy to miss (issue 49 §3). Every expected value is written from gorush's code and its
/// libraries' (firebase-admin-go v4.19.0, sideshow/apns2 v0.25.0), cited on each test, or from the one
/// deliberate difference (VoIP topics, listed in the README).
@Suite("gorush drop-in: provider requests and answers as gorush's, end to end", .serialized)
struct GorushDropInEndToEndTests {
    typealias Fidelity = ProviderRequestFidelityEndToEndTests

    /// One row: the notification's fields (with `{M}` where the row's marker goes) and what is expected.
    struct Row {
        let fields: String
        let expected: String

        init(_ fields: String, _ expected: String) {
            self.fields = fields
            self.expected = expected
        }

        func fields(_ marker: String) -> String { self.fields.replacingOccurrences(of: "{M}", with: marker) }
        func expected(_ marker: String) -> String { self.expected.replacingOccurrences(of: "{M}", with: marker) }
    }

    /// The answer's `counts` and each log entry's `error`.
    static func countsAndErrors(_ answer: String) throws -> (Int, [String]) {
        let json = try Fidelity.json(answer)
        guard case .number(let counts)? = json["counts"], case .array(let logs)? = json["logs"] else {
            Issue.record("not gorush's answer: \(answer)")
            return (-1, [])
        }
        return (Int(counts), logs.map { $0["error"]?.stringValue ?? "" })
    }

    /// Rule 1. gorush reads the caller's `notification` into firebase-admin-go's `messaging.Notification`
    /// (`notify/notification.go` `PushNotification.Notification`; firebase-admin-go `messaging/messaging.go`
    /// `Notification`: `title`, `body`, `image`), so `icon`, `color`, `click_action`, `sound`, `tag`… are
    /// dropped and reach FCM nowhere; FCM v1 would refuse the whole message for any of them. Only the
    /// top-level `sound` string reaches `android.notification.sound` (`notification_fcm.go`
    /// `setupFCMSound`).
    @Test(.timeLimit(.minutes(3)))
    func fcmNotificationCarriesOnlyTitleBodyAndImage() async throws {
        let token = Fidelity.fcmToken
        let rows = [
            Row(
                ##""message":"M","notification":{"title":"N","icon":"ic","color":"#112233","click_action":"OPEN","sound":"ding","tag":"t","body_loc_key":"k"}"##,
                #"{"notification":{"title":"N","body":"M"},"data":{"marker":"{M}"},"token":"\#(token)"}"#
            ),
            Row(#""notification":{"icon":"ic","tag":"t"}"#, #"{"notification":{},"data":{"marker":"{M}"},"token":"\#(token)"}"#),
            Row(
                #""notification":{"image":"https://example.org/i.png","channel_id":"c","sound":"bell"},"sound":"ding""#,
                #"""
                {"notification":{"image":"https://example.org/i.png"},"android":{"notification":{"sound":"ding"}},
                 "apns":{"payload":{"aps":{"sound":"ding"}}},"data":{"marker":"{M}"},"token":"\#(token)"}
                """#
            ),
        ]
        try await Fidelity.withGateway { gateway in
            for (index, row) in rows.enumerated() {
                let marker = "fcm-notification-\(index)"
                let request = #"{"notifications":[{"tokens":["\#(token)"],"platform":2,"data":{"marker":"\#(marker)"},\#(row.fields(marker))}]}"#
                let (status, answer) = try await gateway.post("/api/push", request)
                #expect(status == 200)
                #expect(answer == #"{"counts":1,"logs":[],"success":"ok"}"#, "row \(index)")
                let sent = try await gateway.delivery("fcm", containing: marker)
                #expect(sent["status"] == 200, "row \(index)")
                #expect(sent["headers"]?["content-type"]?.stringValue?.hasPrefix("application/json") == true)
                #expect(try Fidelity.json(sent["body"]?.stringValue ?? "") == Fidelity.json(row.expected(marker)), "row \(index)")
            }
        }
    }

    /// Rule 2. firebase-admin-go sends `topic` without a leading `/topics/` (`messaging/messaging.go`
    /// `Message.MarshalJSON`); gorush hands it the caller's topic as written and sends no token with it
    /// (`notification_fcm.go` `GetAndroidNotification`). A condition goes as written. gorush counts the
    /// topic, not the condition (`router/server.go` `countNotificationTargets`).
    @Test(.timeLimit(.minutes(3)))
    func fcmTopicIsSentWithoutTheTopicsPrefix() async throws {
        let rows = [
            Row(#""topic":"/topics/news""#, #"{"notification":{"body":"M"},"data":{"marker":"{M}"},"topic":"news"}"#),
            Row(#""topic":"news""#, #"{"notification":{"body":"M"},"data":{"marker":"{M}"},"topic":"news"}"#),
            Row(#""condition":"'news' in topics""#, #"{"notification":{"body":"M"},"data":{"marker":"{M}"},"condition":"'news' in topics"}"#),
        ]
        let counts = [1, 1, 0]
        try await Fidelity.withGateway { gateway in
            for (index, row) in rows.enumerated() {
                let marker = "fcm-topic-\(index)"
                let request = #"{"notifications":[{"platform":2,"message":"M","data":{"marker":"\#(marker)"},\#(row.fields(marker))}]}"#
                let (status, answer) = try await gateway.post("/api/push", request)
                #expect(status == 200)
                #expect(try Self.countsAndErrors(answer) == (counts[index], []), "row \(index)")
                let sent = try await gateway.delivery("fcm", containing: marker)
                #expect(try Fidelity.json(sent["body"]?.stringValue ?? "") == Fidelity.json(row.expected(marker)), "row \(index)")
            }
        }
    }

    /// Rule 3. A notification with nobody to send to: `PushToAndroid` and `PushToHuawei` stop at
    /// `CheckMessage` (`notify/notification.go`, "please provide at least one device token"), an error
    /// `handleNotification` (`router/server.go`) drops from the sync answer; `PushToIOS` has no token to
    /// loop over. `countNotificationTargets` counts tokens and the topic: 0. So the answer has no log entry
    /// and counts 0, and no provider hears of it.
    @Test(.timeLimit(.minutes(3)))
    func aNotificationWithoutTargetsIsCountedZeroAndNotListed() async throws {
        let rows = [
            Row(#"{"platform":2,"message":"{M}"}"#, #"{"counts":0,"logs":[],"success":"ok"}"#),
            Row(#"{"platform":2,"tokens":[],"to":"","topic":"","condition":"","message":"{M}"}"#, #"{"counts":0,"logs":[],"success":"ok"}"#),
            Row(#"{"platform":3,"tokens":[],"message":"{M}"}"#, #"{"counts":0,"logs":[],"success":"ok"}"#),
            Row(#"{"platform":1,"topic":"im.pushgate.sandbox","message":"{M}"}"#, #"{"counts":1,"logs":[],"success":"ok"}"#),
            // Beside a notification that has a token, which alone is counted and sent.
            Row(
                #"{"platform":2,"message":"{M}"},{"platform":2,"tokens":["\#(Fidelity.fcmToken)"],"message":"{M}-sent"}"#,
                #"{"counts":1,"logs":[],"success":"ok"}"#
            ),
        ]
        try await Fidelity.withGateway { gateway in
            for (index, row) in rows.enumerated() {
                let marker = "no-target-\(index)"
                let (status, answer) = try await gateway.post("/api/push", #"{"notifications":[\#(row.fields(marker))]}"#)
                #expect(status == 200)
                #expect(answer == row.expected(marker), "row \(index)")
            }
            let bodies = try await gateway.deliveries().map { $0["body"]?.stringValue ?? "" }
            #expect(bodies.filter { $0.contains("no-target-") }.count == 1)
            #expect(bodies.contains { $0.contains("no-target-4-sent") })
        }
    }

    /// Rule 4. The APNs sound as gorush sets it (`notify/notification_apns.go` `setPayloadSound`): a string
    /// as given; an object through gorush's own `Sound` (`critical`, `name`, `volume`, each left out when
    /// zero, no defaults); then a top-level `name` or `volume` through apns2's `SoundName` / `SoundVolume`
    /// (`payload/builder.go`), whose `aps.sound()` replaces any other sound by
    /// `{"critical":1,"name":"default","volume":1}` before setting the given key.
    @Test(.timeLimit(.minutes(3)))
    func apnsSoundIsGorushsStringOrDictionary() async throws {
        let rows = [
            Row(#""sound":"ding""#, #""ding""#),
            Row(#""sound":{"name":"bell.caf"}"#, #"{"name":"bell.caf"}"#),
            Row(#""sound":{"critical":1,"name":"bell.caf","volume":0.5}"#, #"{"critical":1,"name":"bell.caf","volume":0.5}"#),
            Row(#""name":"bell.caf""#, #"{"critical":1,"name":"bell.caf","volume":1}"#),
            Row(#""volume":0.5"#, #"{"critical":1,"name":"default","volume":0.5}"#),
            Row(#""sound":"ding","name":"bell.caf""#, #"{"critical":1,"name":"bell.caf","volume":1}"#),
            Row(#""sound":{"critical":3,"name":"test","volume":0.25},"name":"foobar","volume":0.75"#, #"{"critical":1,"name":"foobar","volume":0.75}"#),
        ]
        try await Fidelity.withGateway { gateway in
            for (index, row) in rows.enumerated() {
                let marker = "apns-sound-\(index)"
                let request = #"""
                    {"notifications":[{"tokens":["\#(Fidelity.apnsToken)"],"platform":1,"message":"M","topic":"im.pushgate.sandbox",
                     "data":{"marker":"\#(marker)"},\#(row.fields(marker))}]}
                    """#
                let (status, answer) = try await gateway.post("/api/push", request)
                #expect(status == 200)
                #expect(try Self.countsAndErrors(answer) == (2, []), "row \(index)")
                let sent = try await gateway.delivery("apns", containing: marker)
                #expect(sent["status"] == 200, "row \(index)")
                #expect(Fidelity.apnsHeaders(sent) == ["apns-topic": "im.pushgate.sandbox", "apns-push-type": "alert"], "row \(index)")
                let expected = #"{"aps":{"alert":"M","sound":\#(row.expected(marker))},"marker":"\#(marker)"}"#
                #expect(try Fidelity.json(sent["body"]?.stringValue ?? "") == Fidelity.json(expected), "row \(index)")
            }
        }
    }

    /// Rule 5. A failure's `error` as gorush shows it. APNs: `PushToIOS` logs `errors.New(res.Reason)`, the
    /// bare reason, also for what Pushgate refuses before sending because APNs would (an oversized payload:
    /// `PayloadTooLarge`; a collapse id over 64 bytes: `BadCollapseId`; an unknown push type:
    /// `InvalidPushType`; an `apns_id` that is no UUID: `BadMessageId`). FCM: `PushToAndroid` logs
    /// firebase-admin-go's `FirebaseError`, whose text is the `message` of Google's answer
    /// (`internal/errors.go` `NewFirebaseErrorOnePlatform`).
    @Test(.timeLimit(.minutes(3)))
    func failuresShowTheProvidersErrorAsGorushDoes() async throws {
        let apns = #""tokens":["\#(Fidelity.apnsToken)"],"platform":1,"topic":"im.pushgate.sandbox""#
        let rows = [
            Row(#"{\#(apns),"message":"\#(String(repeating: "x", count: 4100))","data":{"marker":"{M}"}}"#, "PayloadTooLarge"),
            Row(#"{\#(apns),"message":"M","collapse_id":"\#(String(repeating: "c", count: 65))","data":{"marker":"{M}"}}"#, "BadCollapseId"),
            Row(#"{\#(apns),"message":"M","push_type":"bogus","data":{"marker":"{M}"}}"#, "InvalidPushType"),
            Row(#"{\#(apns),"message":"M","apns_id":"not-a-uuid","data":{"marker":"{M}"}}"#, "BadMessageId"),
            Row(#"{"tokens":["\#(GorushEndToEndTests.deadToken)"],"platform":1,"message":"M","data":{"marker":"{M}"}}"#, "Unregistered"),
            Row(#"{"tokens":["unregistered-gone"],"platform":2,"message":"M","data":{"marker":"{M}"}}"#, "Requested entity was not found."),
            Row(#"{"tokens":["badtoken-1"],"platform":2,"message":"M","data":{"marker":"{M}"}}"#, "The registration token is not a valid FCM registration token"),
            Row(#"{"tokens":["mismatch-1"],"platform":2,"message":"M","data":{"marker":"{M}"}}"#, "SenderId mismatch"),
        ]
        try await Fidelity.withGateway { gateway in
            for (index, row) in rows.enumerated() {
                let marker = "failure-\(index)"
                let (status, answer) = try await gateway.post("/api/push", #"{"notifications":[\#(row.fields(marker))]}"#)
                #expect(status == 200)
                #expect(try Self.countsAndErrors(answer).1 == [row.expected], "row \(index)")
            }
            // The first four never reach APNs: Pushgate refuses them before sending.
            let bodies = try await gateway.deliveries().map { $0["body"]?.stringValue ?? "" }
            for index in 0..<4 { #expect(!bodies.contains { $0.contains("\"failure-\(index)\"") }, "row \(index)") }
        }
    }

    /// Rule 6, a deliberate difference (the README lists it). gorush sends the caller's `topic` as
    /// `apns-topic` whatever the push type (`notify/notification_apns.go` `GetIOSNotification`), and APNs
    /// refuses a VoIP push to the bare bundle id; Pushgate appends `.voip` for a VoIP push whose topic has
    /// no such suffix, so the call arrives. Any other topic goes as gorush sends it.
    @Test(.timeLimit(.minutes(3)))
    func aVoIPPushToTheBareBundleIDGoesToItsVoIPTopic() async throws {
        let rows = [
            Row(#""topic":"im.pushgate.sandbox","push_type":"voip""#, "im.pushgate.sandbox.voip|voip"),
            Row(#""topic":"im.pushgate.sandbox.voip","push_type":"voip""#, "im.pushgate.sandbox.voip|voip"),
            Row(#""topic":"im.pushgate.sandbox","push_type":"alert""#, "im.pushgate.sandbox|alert"),
            Row(#""topic":"im.pushgate.sandbox""#, "im.pushgate.sandbox|alert"),
        ]
        try await Fidelity.withGateway { gateway in
            for (index, row) in rows.enumerated() {
                let marker = "voip-\(index)"
                let request = #"{"notifications":[{"tokens":["\#(Fidelity.apnsToken)"],"platform":1,"message":"M","data":{"marker":"\#(marker)"},\#(row.fields(marker))}]}"#
                let (status, answer) = try await gateway.post("/api/push", request)
                #expect(status == 200)
                #expect(try Self.countsAndErrors(answer) == (2, []), "row \(index)")
                let sent = try await gateway.delivery("apns", containing: marker)
                let parts = row.expected.split(separator: "|").map(String.init)
                #expect(sent["status"] == 200, "row \(index)")
                #expect(Fidelity.apnsHeaders(sent) == ["apns-topic": parts[0], "apns-push-type": parts[1]], "row \(index)")
                #expect(try Fidelity.json(sent["body"]?.stringValue ?? "") == Fidelity.json(#"{"aps":{"alert":"M"},"marker":"\#(marker)"}"#), "row \(index)")
            }
        }
    }
}
