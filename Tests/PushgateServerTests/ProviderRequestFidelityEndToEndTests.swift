import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateTestSupport
import Testing

/// The complete provider request each front end makes, through the real `pushgate` binary and the
/// built-in sandbox's emulators, against what that protocol's reference implementation sends for the same
/// call. The expected requests are written out from the references' documented behaviour (gorush v1.22.0
/// with firebase-admin-go and sideshow/apns2; Sygnal), never produced by Pushgate's own code. Back ends
/// add nothing the front end did not state: a gorush caller (or status-go, which posts the same shape) that
/// gives no `priority` gets no `android` block and no `apns-priority` header.
///
/// `apns-id` is the one header not compared by value: apns2 sends none unless the caller gives one, Sygnal a
/// new UUID per attempt, Pushgate a new UUID per attempt unless the front end states one (APNs makes one
/// up when it is missing, so the difference is invisible to the device).
@Suite("Provider requests as the references send them, end to end", .serialized)
struct ProviderRequestFidelityEndToEndTests {
    static let apnsToken = String(repeating: "a1", count: 32)
    static let fcmToken = "demo-fcm-registration-token"
    static let hmsToken = "demo-hms-token"

    struct Gateway {
        let process: GatewayProcess
        let port: Int

        func post(_ path: String, _ body: String) async throws -> (UInt, String) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(self.port)\(path)")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 20)))
        }

        /// Every request the emulators received, oldest first.
        func deliveries() async throws -> [JSONValue] {
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(self.port)/sandbox/deliveries"), timeout: .seconds(30))
            guard case .array(let all) = try JSONParser.parse(Array(buffer: try await response.body.collect(upTo: 1 << 24))) else { return [] }
            return all
        }

        /// The one request whose body contains `marker`, once it has arrived.
        func delivery(_ provider: String, containing marker: String) async throws -> JSONValue {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let matching = try await self.deliveries().filter { $0["provider"]?.stringValue == provider && ($0["body"]?.stringValue ?? "").contains(marker) }
                if matching.count == 1 { return matching[0] }
                #expect(matching.count <= 1, "more than one \(provider) request contains \(marker)")
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("no \(provider) request containing \(marker); gateway log:\n\(self.process.errors.suffix(3000))")
            return .null
        }
    }

    static func withGateway(_ body: @Sendable (Gateway) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        // No apps: the built-in sandbox runs, with its demo apps (topic im.pushgate.sandbox for APNs).
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            gorush:
              ios_app: demo.apns
              android_app: demo.fcm
              huawei_app: demo.hms
              sync: true
              allow_unauthenticated: true
            """)
        let process = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { process.signal(SIGTERM) }
        let port = try #require(try await process.waitForListeners().first { $0.name == "http" }).port
        try await body(Gateway(process: process, port: port))
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    /// The `apns-*` headers of an APNs request, but `apns-id`.
    static func apnsHeaders(_ delivery: JSONValue) -> [String: String] {
        guard case .object(let headers)? = delivery["headers"] else { return [:] }
        var result: [String: String] = [:]
        for (name, value) in headers where name.hasPrefix("apns-") && name != "apns-id" {
            result[name] = value.stringValue
        }
        return result
    }

    /// gorush → FCM: firebase-admin-go marshals only the `messaging.Message` fields gorush set. Without
    /// `priority` (and without an `android` object) gorush leaves `Android` nil, so the request has no
    /// `android` block (`notify/notification_fcm.go` `GetAndroidNotification`); `data` values are strings
    /// (`convertDataToStringMap`). With `priority: high`, `android.priority` is `high`, as given
    /// (`setupFCMPriority`; firebase-admin-go sends it lower-case).
    @Test(.timeLimit(.minutes(3)))
    func gorushToFCMSendsOnlyWhatTheCallerGave() async throws {
        try await Self.withGateway { gateway in
            let dataOnly = #"{"notifications":[{"tokens":["\#(Self.fcmToken)"],"platform":2,"data":{"marker":"fcm-data-only","n":1}}]}"#
            #expect(try await gateway.post("/api/push", dataOnly).0 == 200)
            let sent = try await gateway.delivery("fcm", containing: "fcm-data-only")
            #expect(try Self.json(sent["body"]?.stringValue ?? "") == Self.json(#"{"data":{"marker":"fcm-data-only","n":"1"},"token":"\#(Self.fcmToken)"}"#))
            #expect(sent["headers"]?["content-type"]?.stringValue?.hasPrefix("application/json") == true)

            // status-go's call (`protocol/pushnotificationserver/gorush.go`): message, topic "" and three hex
            // data keys, no priority: a notification body and data, nothing else.
            let status = #"""
                {"notifications":[{"tokens":["\#(Self.fcmToken)"],"platform":2,"message":"You have a new message","topic":"",
                 "data":{"encryptedMessage":"0xstatus","chatId":"0x01","publicKey":"0x04ff"}}]}
                """#
            #expect(try await gateway.post("/api/push", status).0 == 200)
            let statusSent = try await gateway.delivery("fcm", containing: "0xstatus")
            #expect(
                try Self.json(statusSent["body"]?.stringValue ?? "")
                    == Self.json(#"""
                        {"notification":{"body":"You have a new message"},"data":{"encryptedMessage":"0xstatus","chatId":"0x01","publicKey":"0x04ff"},
                         "token":"\#(Self.fcmToken)"}
                        """#)
            )

            let high = #"{"notifications":[{"tokens":["\#(Self.fcmToken)"],"platform":2,"priority":"high","data":{"marker":"fcm-high"}}]}"#
            #expect(try await gateway.post("/api/push", high).0 == 200)
            let highSent = try await gateway.delivery("fcm", containing: "fcm-high")
            #expect(try Self.json(highSent["body"]?.stringValue ?? "") == Self.json(#"{"android":{"priority":"high"},"data":{"marker":"fcm-high"},"token":"\#(Self.fcmToken)"}"#))
        }
    }

    /// gorush → APNs: apns2 sends `apns-topic` (the caller's `topic`), `apns-push-type: alert` when no
    /// `push_type` is given, and `apns-priority` only for `priority` normal (5) or high (10); no
    /// `apns-expiration` or `apns-collapse-id` unless given (`notify/notification_apns.go`
    /// `GetIOSNotification`; apns2 `client.go` `setHeaders`). `data` keys are top-level payload keys.
    @Test(.timeLimit(.minutes(3)))
    func gorushToAPNsSendsOnlyWhatTheCallerGave() async throws {
        try await Self.withGateway { gateway in
            let plain = #"{"notifications":[{"tokens":["\#(Self.apnsToken)"],"platform":1,"message":"apns-plain","topic":"im.pushgate.sandbox"}]}"#
            #expect(try await gateway.post("/api/push", plain).0 == 200)
            let sent = try await gateway.delivery("apns", containing: "apns-plain")
            #expect(Self.apnsHeaders(sent) == ["apns-topic": "im.pushgate.sandbox", "apns-push-type": "alert"])
            #expect(try Self.json(sent["body"]?.stringValue ?? "") == Self.json(#"{"aps":{"alert":"apns-plain"}}"#))

            let normal = #"""
                {"notifications":[{"tokens":["\#(Self.apnsToken)"],"platform":1,"message":"apns-normal","topic":"im.pushgate.sandbox",
                 "priority":"normal","collapse_id":"c1","expiration":4102444800,"data":{"chatId":"0x01"}}]}
                """#
            #expect(try await gateway.post("/api/push", normal).0 == 200)
            let normalSent = try await gateway.delivery("apns", containing: "apns-normal")
            #expect(
                Self.apnsHeaders(normalSent)
                    == ["apns-topic": "im.pushgate.sandbox", "apns-push-type": "alert", "apns-priority": "5", "apns-collapse-id": "c1", "apns-expiration": "4102444800"]
            )
            #expect(try Self.json(normalSent["body"]?.stringValue ?? "") == Self.json(#"{"aps":{"alert":"apns-normal"},"chatId":"0x01"}"#))

            // A push that only wakes the app, with `expiration: 0`: apns2 still says `alert`, states no
            // priority, and writes no `apns-expiration` for a time not after the epoch.
            let silent = #"""
                {"notifications":[{"tokens":["\#(Self.apnsToken)"],"platform":1,"content_available":true,"topic":"im.pushgate.sandbox",
                 "expiration":0,"data":{"marker":"apns-silent"}}]}
                """#
            #expect(try await gateway.post("/api/push", silent).0 == 200)
            let silentSent = try await gateway.delivery("apns", containing: "apns-silent")
            #expect(Self.apnsHeaders(silentSent) == ["apns-topic": "im.pushgate.sandbox", "apns-push-type": "alert"])
            #expect(try Self.json(silentSent["body"]?.stringValue ?? "") == Self.json(#"{"aps":{"content-available":1},"marker":"apns-silent"}"#))
        }
    }

    /// gorush → HMS: gorush starts from go-hms-push's default Android config (`urgency` NORMAL, `ttl`
    /// 86400s) and sets `urgency` HIGH for `priority: high`; `huawei_data` is the message's `data`
    /// (`notify/notification_hms.go` `GetHuaweiNotification`). The back end adds nothing to it.
    @Test(.timeLimit(.minutes(3)))
    func gorushToHMSSendsWhatGorushBuilds() async throws {
        try await Self.withGateway { gateway in
            let dataOnly = #"{"notifications":[{"tokens":["\#(Self.hmsToken)"],"platform":3,"huawei_data":"{\"marker\":\"hms-data\"}"}]}"#
            #expect(try await gateway.post("/api/push", dataOnly).0 == 200)
            let sent = try await gateway.delivery("hms", containing: "hms-data")
            #expect(
                try Self.json(sent["body"]?.stringValue ?? "")
                    == Self.json(#"{"android":{"urgency":"NORMAL","ttl":"86400s"},"data":"{\"marker\":\"hms-data\"}","token":["\#(Self.hmsToken)"]}"#)
            )
        }
    }

    /// Matrix → FCM and APNs as Sygnal sends them: FCM v1 `{"data": {…strings…}, "android": {"priority":
    /// "high"|"normal"}, "token"}` (§10.4 of the Matrix reference: Sygnal's `prio` lower-case); APNs
    /// `apns-priority` 10 for `prio: high` and 5 for `low`, the app's topic, no `apns-expiration` or
    /// `apns-collapse-id`, and Sygnal's full payload. Pushgate also sends `apns-push-type: alert`, which
    /// Sygnal sends only when `push_type` is configured (a difference the README lists).
    @Test(.timeLimit(.minutes(3)))
    func matrixSendsWhatSygnalSends() async throws {
        try await Self.withGateway { gateway in
            func notify(_ prio: String, _ body: String, device: String) -> String {
                #"""
                {"notification":{"event_id":"$\#(body)","room_id":"!r:example.org","type":"m.room.message","sender":"@a:example.org",
                 "sender_display_name":"Alice","room_name":"Room","prio":"\#(prio)","content":{"msgtype":"m.text","body":"\#(body)"},
                 "counts":{"unread":2},"devices":[\#(device)]}}
                """#
            }
            let fcm = #"{"app_id":"demo.fcm","pushkey":"\#(Self.fcmToken)"}"#
            #expect(try await gateway.post("/_matrix/push/v1/notify", notify("low", "matrix-fcm", device: fcm)) == (200, #"{"rejected":[]}"#))
            let fcmSent = try await gateway.delivery("fcm", containing: "matrix-fcm")
            #expect(
                try Self.json(fcmSent["body"]?.stringValue ?? "")
                    == Self.json(#"""
                        {"data":{"event_id":"$matrix-fcm","type":"m.room.message","sender":"@a:example.org","room_name":"Room",
                          "sender_display_name":"Alice","content_msgtype":"m.text","content_body":"matrix-fcm","room_id":"!r:example.org",
                          "prio":"normal","unread":"2"},
                         "android":{"priority":"normal"},"token":"\#(Self.fcmToken)"}
                        """#)
            )

            let pushkey = Data([UInt8](repeating: 0xa1, count: 32)).base64EncodedString()
            let apns = #"{"app_id":"demo.apns","pushkey":"\#(pushkey)"}"#
            for (prio, priority) in [("high", "10"), ("low", "5")] {
                #expect(try await gateway.post("/_matrix/push/v1/notify", notify(prio, "matrix-apns-\(prio)", device: apns)) == (200, #"{"rejected":[]}"#))
                let sent = try await gateway.delivery("apns", containing: "matrix-apns-\(prio)")
                #expect(Self.apnsHeaders(sent) == ["apns-topic": "im.pushgate.sandbox", "apns-priority": priority, "apns-push-type": "alert"], "\(prio)")
                // Sygnal's full payload (§9.4–9.6 of the Matrix reference, as its `test_expected`): the
                // loc-key for a text message in a named room, [from, room, body], the badge from `unread`,
                // and `room_id` and `event_id` at the top.
                #expect(
                    try Self.json(sent["body"]?.stringValue ?? "")
                        == Self.json(#"""
                            {"room_id":"!r:example.org","event_id":"$matrix-apns-\#(prio)",
                             "aps":{"alert":{"loc-key":"MSG_FROM_USER_IN_ROOM_WITH_CONTENT","loc-args":["Alice","Room","matrix-apns-\#(prio)"]},"badge":2}}
                            """#), "\(prio)"
                )
            }
        }
    }
}
