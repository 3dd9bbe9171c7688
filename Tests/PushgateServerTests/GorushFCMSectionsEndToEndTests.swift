import AsyncHTTPClient
import Foundation
import NIOCore
import PushgateCore
import PushgateTestSupport
import Testing

/// gorush's FCM requests where the caller's `priority`, `android`, `webpush`, `apns` and `fcm_options`
/// go through firebase-admin-go v4.19.0's typed structs (issue 49 §3), against the real `pushgate` binary
/// and the sandbox's FCM emulator: the complete body FCM receives, the answer, and what is never sent.
/// Each row's expectation is written from gorush v1.22.0's code and firebase-admin-go's, cited on each
/// test.
@Suite("gorush drop-in: the caller's FCM sections as firebase-admin-go sends them, end to end", .serialized)
struct GorushFCMSectionsEndToEndTests {
    typealias Fidelity = ProviderRequestFidelityEndToEndTests
    typealias Row = GorushDropInEndToEndTests.Row

    /// `android.priority` is the caller's `priority` as given (gorush `notify/notification_fcm.go`
    /// `setupFCMPriority`, and `setupFCMSound` when it makes the `android` block), or the `android` object's
    /// own; firebase-admin-go sends it as it holds it, lower-case (`messaging/messaging.go`
    /// `AndroidConfig.Priority`, "one of normal or high"). Anything else makes firebase-admin-go refuse
    /// every message of the notification (`messaging/messaging_utils.go` `validateAndroidConfig`), which
    /// gorush logs and counts as one Android error (`PushToAndroid`): nothing reaches FCM.
    @Test(.timeLimit(.minutes(3)))
    func androidPriorityIsTheCallersLowerCaseOrTheNotificationIsRefused() async throws {
        let token = Fidelity.fcmToken
        let sent = [
            Row(#""priority":"high""#, #"{"android":{"priority":"high"},"data":{"marker":"{M}"},"token":"\#(token)"}"#),
            Row(#""priority":"normal""#, #"{"android":{"priority":"normal"},"data":{"marker":"{M}"},"token":"\#(token)"}"#),
            Row(#""priority":"normal","android":{"priority":"high"}"#, #"{"android":{"priority":"high"},"data":{"marker":"{M}"},"token":"\#(token)"}"#),
            Row(
                #""priority":"high","sound":"ding""#,
                #"""
                {"android":{"priority":"high","notification":{"sound":"ding"}},"apns":{"payload":{"aps":{"sound":"ding"}}},
                 "data":{"marker":"{M}"},"token":"\#(token)"}
                """#
            ),
        ]
        let refused = [#""priority":"HIGH""#, #""priority":"urgent""#, #""android":{"priority":"NORMAL"}"#]
        try await Self.check(sent: sent, refused: refused, reason: "priority must be 'normal' or 'high'", name: "priority")
    }

    /// gorush reads the caller's objects into firebase-admin-go's structs (`notify/notification.go`
    /// `PushNotification.Android`, `Webpush`, `APNS`, `FCMOptions`), which drop what they do not declare
    /// (`AndroidConfig`, `AndroidNotification`, `WebpushConfig`, `WebpushNotificationAction`, `APNSConfig`,
    /// `ApsAlert`, `CriticalSound`, `FCMOptions`) and leave out empty typed fields, while `APNSPayload`,
    /// `Aps` and `WebpushNotification` keep undeclared members as custom data (their `UnmarshalJSON` /
    /// `MarshalJSON`).
    @Test(.timeLimit(.minutes(3)))
    func undeclaredMembersOfTheCallersSectionsAreDroppedAsFirebaseAdminGoDropsThem() async throws {
        let token = Fidelity.fcmToken
        let sent = [
            Row(
                #""android":{"collapse_key":"k","foo":"x","direct_boot_ok":false,"notification":{"channel_id":"c","bar":1},"fcm_options":{"baz":1}}"#,
                #"{"android":{"collapse_key":"k","notification":{"channel_id":"c"},"fcm_options":{}},"data":{"marker":"{M}"},"token":"\#(token)"}"#
            ),
            Row(
                #""webpush":{"headers":{"Urgency":"high"},"foo":1,"notification":{"title":"T","custom":"c","actions":[{"action":"a","x":1}]},"fcm_options":{"link":"https://example.org/","x":1}}"#,
                #"""
                {"webpush":{"headers":{"Urgency":"high"},"notification":{"title":"T","custom":"c","actions":[{"action":"a"}]},
                 "fcm_options":{"link":"https://example.org/"}},"data":{"marker":"{M}"},"token":"\#(token)"}
                """#
            ),
            Row(
                #""apns":{"headers":{"apns-priority":"10"},"foo":1,"payload":{"aps":{"alert":{"title":"T","x":1},"sound":{"name":"s","x":1},"custom":true},"k":"v"}}"#,
                #"""
                {"apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"alert":{"title":"T"},"sound":{"name":"s"},"custom":true},"k":"v"}},
                 "data":{"marker":"{M}"},"token":"\#(token)"}
                """#
            ),
            Row(#""fcm_options":{"analytics_label":"l","foo":"x"}"#, #"{"fcm_options":{"analytics_label":"l"},"data":{"marker":"{M}"},"token":"\#(token)"}"#),
        ]
        try await Self.check(sent: sent, refused: [], reason: "", name: "members")
    }

    /// `android.ttl` is text: `AndroidConfig.UnmarshalJSON` reads it into a string and through
    /// `stringToDuration`, `MarshalJSON` writes it back through `durationToString` (`3.5s`, read as 3 s and
    /// 5 ns, goes as `3.000000005s`). A number, or text it cannot read, fails gorush's binding of the whole
    /// request (`router/server.go` `pushHandler`: 400 `Missing notifications field.`); a negative one is
    /// refused by `validateAndroidConfig` and nothing is sent.
    @Test(.timeLimit(.minutes(3)))
    func androidTimeToLiveIsTextAsFirebaseAdminGoReadsIt() async throws {
        let token = Fidelity.fcmToken
        let sent = [
            Row(#""android":{"ttl":"3600s"}"#, #"{"android":{"ttl":"3600s"},"data":{"marker":"{M}"},"token":"\#(token)"}"#),
            Row(#""android":{"ttl":"3.5s"}"#, #"{"android":{"ttl":"3.000000005s"},"data":{"marker":"{M}"},"token":"\#(token)"}"#),
            Row(#""android":{"ttl":"60"}"#, #"{"android":{"ttl":"60s"},"data":{"marker":"{M}"},"token":"\#(token)"}"#),
        ]
        try await Self.check(sent: sent, refused: [#""android":{"ttl":"-5s"}"#], reason: "ttl duration must not be negative", name: "ttl")
        try await Fidelity.withGateway { gateway in
            for (index, fields) in [#""android":{"ttl":3600}"#, #""android":{"ttl":3600000000000}"#, #""android":{"ttl":"soon"}"#].enumerated() {
                let marker = "ttl-unreadable-\(index)"
                let request = #"{"notifications":[{"tokens":["\#(token)"],"platform":2,"data":{"marker":"\#(marker)"},\#(fields)}]}"#
                let (status, answer) = try await gateway.post("/api/push", request)
                #expect(status == 400, "row \(index)")
                #expect(answer == #"{"code":400,"message":"Missing notifications field."}"#, "row \(index)")
            }
            let bodies = try await gateway.deliveries().map { $0["body"]?.stringValue ?? "" }
            #expect(!bodies.contains { $0.contains("ttl-unreadable-") })
        }
    }

    /// A topic and a condition together: gorush builds one message with both (`GetAndroidNotification`),
    /// which firebase-admin-go refuses ("exactly one of token, topic or condition", `validateMessage`)
    /// before sending any message of the batch, token messages included (`sendEachInBatch`). gorush counts
    /// the topic and the tokens (`countNotificationTargets`) and one Android error (`PushToAndroid`), and
    /// returns the error with its failure entry, which the answer therefore leaves out (`router/server.go`
    /// `handleNotification`). A malformed topic is refused the same way.
    @Test(.timeLimit(.minutes(3)))
    func aTopicAndAConditionTogetherAreRefusedAndNothingIsSent() async throws {
        try await Fidelity.withGateway { gateway in
            let rows = [
                (#""topic":"news","condition":"'news' in topics""#, 1),
                (#""topic":"news","condition":"'news' in topics","tokens":["\#(Fidelity.fcmToken)"]"#, 2),
                (#""topic":"/topics/news/daily""#, 1),
            ]
            for (index, (fields, counts)) in rows.enumerated() {
                let marker = "topic-and-condition-\(index)"
                let errors = try await Self.androidErrors(gateway)
                let (status, answer) = try await gateway.post("/api/push", #"{"notifications":[{"platform":2,"data":{"marker":"\#(marker)"},\#(fields)}]}"#)
                #expect(status == 200)
                #expect(answer == #"{"counts":\#(counts),"logs":[],"success":"ok"}"#, "row \(index)")
                #expect(try await GorushEndToEndTests.eventually { try await Self.androidErrors(gateway) == errors + 1 }, "row \(index)")
            }
            let bodies = try await gateway.deliveries().map { $0["body"]?.stringValue ?? "" }
            #expect(!bodies.contains { $0.contains("topic-and-condition-") })
        }
    }

    /// `/api/stat/app`'s Android error count.
    static func androidErrors(_ gateway: Fidelity.Gateway) async throws -> Int {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(gateway.port)/api/stat/app"), timeout: .seconds(30))
        let status = try JSONParser.parse(Array(buffer: try await response.body.collect(upTo: 1 << 20)))
        guard case .number(let errors)? = status["android"]?["push_error"] else { return -1 }
        return Int(errors)
    }

    /// Posts each `sent` row (one token, a marker in `data`) and compares the body FCM received; posts each
    /// `refused` row and checks that it is counted, not listed (gorush returns its error with the failure
    /// entry, which `handleNotification` then drops), counted as one Android error, logged with `reason`,
    /// and that FCM heard nothing of it.
    static func check(sent: [Row], refused: [String], reason: String, name: String) async throws {
        let token = Fidelity.fcmToken
        try await Fidelity.withGateway { gateway in
            for (index, row) in sent.enumerated() {
                let marker = "\(name)-sent-\(index)"
                let request = #"{"notifications":[{"tokens":["\#(token)"],"platform":2,"data":{"marker":"\#(marker)"},\#(row.fields(marker))}]}"#
                let (status, answer) = try await gateway.post("/api/push", request)
                #expect(status == 200, "row \(index)")
                #expect(answer == #"{"counts":1,"logs":[],"success":"ok"}"#, "row \(index)")
                let delivered = try await gateway.delivery("fcm", containing: marker)
                #expect(delivered["status"] == 200, "row \(index)")
                #expect(try Fidelity.json(delivered["body"]?.stringValue ?? "") == Fidelity.json(row.expected(marker)), "row \(index)")
            }
            for (index, fields) in refused.enumerated() {
                let marker = "\(name)-refused-\(index)"
                let errors = try await Self.androidErrors(gateway)
                let request = #"{"notifications":[{"tokens":["\#(token)"],"platform":2,"data":{"marker":"\#(marker)"},\#(fields)}]}"#
                let (status, answer) = try await gateway.post("/api/push", request)
                #expect(status == 200, "refused row \(index)")
                #expect(answer == #"{"counts":1,"logs":[],"success":"ok"}"#, "refused row \(index)")
                #expect(try await GorushEndToEndTests.eventually { try await Self.androidErrors(gateway) == errors + 1 }, "refused row \(index)")
            }
            // The gateway's log says why, as gorush's error log does.
            if !refused.isEmpty {
                #expect(gateway.process.errors.contains("fcm service send message error: invalid message at index 0: \(reason)"))
            }
            let bodies = try await gateway.deliveries().map { $0["body"]?.stringValue ?? "" }
            #expect(!bodies.contains { $0.contains("\(name)-refused-") })
        }
    }
}
