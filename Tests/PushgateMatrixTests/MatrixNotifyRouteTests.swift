import CoreMetrics
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PushgateConfig
import PushgateCore
import PushgateDelivery
import PushgateHTTP
import PushgateMatrix
import PushgateServer
import PushgateStoreSQLite
import Synchronization
import Testing

/// A stand-in back end: it answers per token from a script and records what it received.
final class RecordingProvider: PushProvider {
    let appID: String
    let platform: Platform
    private let outcome: @Sendable (String) -> DeliveryOutcome?
    private let received = Mutex<[(token: String, notification: PushNotification)]>([])

    convenience init(appID: String, platform: Platform, outcomes: [String: DeliveryOutcome] = [:]) {
        self.init(appID: appID, platform: platform) { outcomes[$0] }
    }

    /// A provider answering `outcome(token)`, or delivered when it is nil.
    init(appID: String, platform: Platform, outcome: @escaping @Sendable (String) -> DeliveryOutcome?) {
        self.appID = appID
        self.platform = platform
        self.outcome = outcome
    }

    func deliver(_ notification: PushNotification, to token: String, deadline: ContinuousClock.Instant) async -> DeliveryOutcome {
        self.received.withLock { $0.append((token, notification)) }
        return self.outcome(token) ?? .delivered
    }

    var deliveries: [(token: String, notification: PushNotification)] { self.received.withLock { $0 } }
}

@Suite("Matrix notify endpoint")
struct MatrixNotifyRouteTests {
    static let quiet: Logger = {
        var logger = Logger(label: "pushgate.tests")
        logger.logLevel = .critical
        return logger
    }()

    static func withGateway(
        _ providers: [any PushProvider], apps: [String: MatrixAppOptions] = [:],
        _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("matrix-\(UUID().uuidString).sqlite").path
        let store = try await SQLiteStore.open(path: path, logger: Self.quiet)
        let metrics = GatewayMetrics()
        let dispatcher = Dispatcher(directory: ProviderDirectory(providers), store: store, metrics: DeliveryMetrics(factory: NOOPMetricsHandler.instance), logger: Self.quiet)
        let handler = MatrixNotifyHandler(dispatcher: dispatcher, apps: apps, store: store, metrics: MatrixMetrics(factory: NOOPMetricsHandler.instance), logger: Self.quiet)
        let router = GatewayRouterBuilder.build(routes: handler.routes, metrics: metrics, maxRequestBodySize: 1 << 20)
        var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: Self.quiet)
        app.addServices(store)
        try await app.test(.router) { client in try await body(client) }
    }

    static func notify(_ client: any TestClientProtocol, _ json: String, path: String = "/_matrix/push/v1/notify") async throws -> (HTTPResponse.Status, JSONValue?) {
        let response = try await client.execute(uri: path, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: json))
        let body = try? JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: response.body).utf8))
        if response.status == .ok { #expect(response.headers[.contentType] == "application/json") }
        return (response.status, body)
    }

    static func request(devices: String, event: String = #""event_id":"$e1","room_id":"!r:x","type":"m.room.message","sender":"@a:x","content":{"msgtype":"m.text","body":"hi"},"counts":{"unread":2}"#) -> String {
        #"{"notification":{\#(event),"devices":[\#(devices)]}}"#
    }

    @Test func deliversAndRejectsAsTheReferenceTablesSay() async throws {
        let fcm = RecordingProvider(appID: "im.example.android", platform: .fcm, outcomes: ["dead": .invalidToken(reason: "UNREGISTERED")])
        let apns = RecordingProvider(appID: "im.example.*", platform: .apns)
        try await Self.withGateway([fcm, apns]) { client async throws in
            let (status, body) = try await Self.notify(client, Self.request(devices: #"""
                {"app_id":"im.example.android","pushkey":"live"},
                {"app_id":"im.example.android","pushkey":"dead"},
                {"app_id":"im.example.ios","pushkey":"3q2+7w=="},
                {"app_id":"org.unknown","pushkey":"nobody"},
                {"app_id":"im.example.ios","pushkey":"not base64!"}
                """#))
            #expect(status == .ok)
            #expect(body == ["rejected": ["dead", "nobody", "not base64!"]])
            #expect(Set(fcm.deliveries.map(\.token)) == ["live", "dead"])
            // APNs pushkeys arrive base64 and go out as hex, through the glob app.
            #expect(apns.deliveries.map(\.token) == ["deadbeef"])
            #expect(apns.deliveries.first?.notification.payload["aps"]?["badge"] == 2)
            #expect(fcm.deliveries.first?.notification.payload["data"]?["unread"] == "2")
        }
    }

    @Test func aTransientFailureAnswers502SoTheHomeserverRetries() async throws {
        let fcm = RecordingProvider(appID: "app", platform: .fcm, outcomes: ["busy": .retryLater(after: nil, reason: "503")])
        try await Self.withGateway([fcm]) { client async throws in
            let (status, body) = try await Self.notify(client, Self.request(devices: #"{"app_id":"app","pushkey":"busy"}"#))
            #expect(status == .badGateway)
            #expect(body?["errcode"] == "M_UNKNOWN")
        }
    }

    /// A provider refusing the notification for a reason that is not the token's answers 502, as Sygnal's
    /// `NotificationDispatchException` does, whichever provider and reason, also beside a delivered and a
    /// rejected device; the pushkey is not rejected and the event is not remembered as delivered.
    @Test(arguments: [
        (Platform.apns, "InvalidProviderToken"), (.apns, "ExpiredProviderToken"), (.apns, "BadTopic"), (.apns, "PayloadTooLarge"),
        (.fcm, "HTTP 400 INVALID_ARGUMENT (message.data)"), (.fcm, "UNAUTHENTICATED: FCM refused a fresh access token"),
        (.fcm, "HTTP 403 PERMISSION_DENIED"), (.webPush, "push service answered 401"), (.webPush, "payload too large (push service answered 413)"),
    ])
    func aRefusalThatIsNotAboutTheTokenAnswers502(platform: Platform, reason: String) async throws {
        // The token names the device: hex of the name for APNs (whose pushkeys are base64), the name in the
        // endpoint for Web Push, the name itself for FCM.
        let name = { @Sendable (token: String) in ["refused", "dead", "live"].first { token.contains(platform == .apns ? Hex.lowercase(Array($0.utf8)) : $0) } }
        let provider = RecordingProvider(appID: "app", platform: platform) { token in
            switch name(token) {
            case "refused": .rejected(reason: reason)
            case "dead": .invalidToken(reason: "gone")
            default: nil
            }
        }
        try await Self.withGateway([provider]) { client async throws in
            func device(_ name: String) -> String {
                switch platform {
                case .webPush: #"{"app_id":"app","pushkey":"\#(name)","data":{"endpoint":"https://push.example.org/\#(name)","auth":"YXV0aA"}}"#
                case .apns: #"{"app_id":"app","pushkey":"\#(Data(name.utf8).base64EncodedString())"}"#
                default: #"{"app_id":"app","pushkey":"\#(name)"}"#
                }
            }
            let alone = try await Self.notify(client, Self.request(devices: device("refused")))
            #expect(alone.0 == .badGateway)
            #expect(alone.1?["errcode"] == "M_UNKNOWN")
            #expect(alone.1?["rejected"] == nil)
            let mixed = try await Self.notify(client, Self.request(devices: [device("live"), device("refused"), device("dead")].joined(separator: ",")))
            #expect(mixed.0 == .badGateway)
            // Both requests carried the same event: the refused device was asked twice, not filtered as sent.
            #expect(provider.deliveries.count { name($0.token) == "refused" } == 2)
        }
    }

    @Test func aRetriedEventIsDeliveredOnce() async throws {
        let fcm = RecordingProvider(appID: "app", platform: .fcm)
        try await Self.withGateway([fcm]) { client async throws in
            let request = Self.request(devices: #"{"app_id":"app","pushkey":"pk"}"#)
            #expect(try await Self.notify(client, request).0 == .ok)
            #expect(try await Self.notify(client, request).0 == .ok)
            #expect(fcm.deliveries.count == 1)
            // A badge-only update has no event id and is never suppressed.
            let badge = #"{"notification":{"counts":{"unread":0},"devices":[{"app_id":"app","pushkey":"pk"}],"type":null,"sender":""}}"#
            _ = try await Self.notify(client, badge)
            _ = try await Self.notify(client, badge)
            #expect(fcm.deliveries.count == 3)
        }
    }

    /// Element X's and Element Android's test pushes carry the same fixed event id every time (reference
    /// §6.2, §6.3): a second test within the duplicate window is sent as well, to FCM and to UnifiedPush.
    @Test func clientTestPushesAreSentEachTime() async throws {
        let fcm = RecordingProvider(appID: "im.vector.app.android", platform: .fcm)
        let unifiedPush = RecordingProvider(appID: "*", platform: .unifiedPush)
        try await Self.withGateway([fcm, unifiedPush]) { client async throws in
            let elementX = #"{"notification":{"event_id":"$THIS_IS_A_FAKE_EVENT_ID","room_id":"!room:domain","devices":[{"app_id":"io.element.android","pushkey":"https://ntfy.example/upAbc?up=1","data":{"default_payload":{"cs":"A_FAKE_SECRET"}}}]}}"#
            let elementAndroid = #"{"notification":{"event_id":"$THIS_IS_A_FAKE_EVENT_ID","devices":[{"app_id":"im.vector.app.android","pushkey":"fcm-token"}]}}"#
            for _ in 1...2 {
                let (status, body) = try await Self.notify(client, elementX)
                #expect(status == .ok && body?["rejected"] == .array([]), "\(status) \(String(describing: body))")
                #expect(try await Self.notify(client, elementAndroid).0 == .ok)
            }
            #expect(unifiedPush.deliveries.count == 2)
            #expect(fcm.deliveries.count == 2)
        }
    }

    /// A pushkey longer than Synapse stores (512 bytes) and a Web Push endpoint or auth secret longer than
    /// any push service's are rejected unsent: no homeserver's pusher has them, and each would be kept.
    @Test func oversizedPushkeysAndSubscriptionsAreRejectedUnsent() async throws {
        let fcm = RecordingProvider(appID: "app", platform: .fcm)
        let web = RecordingProvider(appID: "web", platform: .webPush)
        try await Self.withGateway([fcm, web]) { client async throws in
            let long = String(repeating: "k", count: 513)
            let devices = """
                {"app_id":"app","pushkey":"\(long)"},{"app_id":"app","pushkey":"\(long.dropLast())"},
                {"app_id":"web","pushkey":"pk-long-endpoint","data":{"endpoint":"https://push.example.org/\(String(repeating: "e", count: 2_048))","auth":"YXV0aA"}},
                {"app_id":"web","pushkey":"pk-long-auth","data":{"endpoint":"https://push.example.org/1","auth":"\(String(repeating: "a", count: 257))"}},
                {"app_id":"web","pushkey":"pk-fine","data":{"endpoint":"https://push.example.org/2","auth":"YXV0aA"}}
                """
            let (status, body) = try await Self.notify(client, Self.request(devices: devices))
            #expect(status == .ok)
            #expect(body == ["rejected": [.string(long), "pk-long-endpoint", "pk-long-auth"]])
            #expect(fcm.deliveries.count == 1 && web.deliveries.count == 1)
        }
    }

    /// Two accounts on one phone: two pushers with one pushkey, told apart by their `data` (Element X's
    /// per-account `default_payload`) or by their counts; each gets the event, and a retry of either
    /// is still sent once.
    @Test func pushersSharingAPushkeyEachGetTheEvent() async throws {
        let fcm = RecordingProvider(appID: "app", platform: .fcm)
        try await Self.withGateway([fcm]) { client async throws in
            let first = Self.request(devices: #"{"app_id":"app","pushkey":"pk","data":{"default_payload":{"cs":"account-a"}}}"#)
            let second = Self.request(devices: #"{"app_id":"app","pushkey":"pk","data":{"default_payload":{"cs":"account-b"}}}"#)
            for request in [first, second, first, second] {
                #expect(try await Self.notify(client, request) == (.ok, ["rejected": []]))
            }
            #expect(fcm.deliveries.count == 2)
            let secrets = fcm.deliveries.map { String(decoding: (try? JSONText.encode($0.notification.payload)) ?? [], as: UTF8.self) }
            #expect(secrets.contains { $0.contains("account-a") } && secrets.contains { $0.contains("account-b") }, "\(secrets)")
            // The same data and other counts (another user's unread count): another pusher.
            let counts = #"{"notification":{"event_id":"$counted","counts":{"unread":%d},"devices":[{"app_id":"app","pushkey":"pk"}]}}"#
            for unread in [1, 2, 2] { _ = try await Self.notify(client, String(format: counts, unread)) }
            #expect(fcm.deliveries.count == 4)
        }
    }

    /// Web Push gets Sygnal's headers, stated by the front end: `Urgency: low` for `prio: low`, `normal`
    /// otherwise, and for an `only_last_per_room` pusher the room's exact Sygnal Topic.
    /// Sygnal's per-app `push_type` (APNs) and `fcm_options` (FCM) apply to the app's Matrix
    /// notifications: the front end states the push type and merges its FCM message over the options (the
    /// message's own members win: `android.priority` over `fcm_options.android.priority`, as Sygnal merges
    /// it). The back ends add neither, so other front ends' notifications go without them.
    @Test func sygnalsPushTypeAndFCMOptionsAreStatedOnMatrixNotifications() async throws {
        let yaml = """
            apps:
              im.example.ios: {type: apns, keyfile: /dev/null, key_id: K, team_id: T, topic: im.example.ios, push_type: voip}
              im.example.android:
                type: gcm
                fcm_options: {android: {priority: normal, ttl: 3600s, notification: {channel_id: messages}}, apns: {payload: {aps: {mutable-content: 1}}}}
              im.example.plain: {type: apns, keyfile: /dev/null, key_id: K, team_id: T, topic: im.example.plain}
            """
        let options = try MatrixFrontEnd.appOptions(GatewayConfiguration(yaml: yaml).apps)
        #expect(options["im.example.ios"]?.apnsPushType == "voip")
        #expect(options["im.example.plain"]?.apnsPushType == nil)
        #expect(options["im.example.android"]?.fcmOptions["apns"] == ["payload": ["aps": ["mutable-content": 1]]])
        let ios = RecordingProvider(appID: "im.example.ios", platform: .apns)
        let plain = RecordingProvider(appID: "im.example.plain", platform: .apns)
        let android = RecordingProvider(appID: "im.example.android", platform: .fcm)
        try await Self.withGateway([ios, plain, android], apps: options) { client async throws in
            let devices = #"""
                {"app_id":"im.example.ios","pushkey":"AAEC"},{"app_id":"im.example.plain","pushkey":"AAEC"},
                {"app_id":"im.example.android","pushkey":"fcm-1"}
                """#
            #expect(try await Self.notify(client, Self.request(devices: devices)) == (.ok, ["rejected": []]))
            #expect(ios.deliveries.map(\.notification.apnsPushType) == ["voip"])
            #expect(plain.deliveries.map(\.notification.apnsPushType) == [nil])
            let message = try #require(android.deliveries.first?.notification.payload)
            #expect(message["apns"] == ["payload": ["aps": ["mutable-content": 1]]])
            #expect(message["android"] == ["priority": "high", "ttl": "3600s", "notification": ["channel_id": "messages"]])
            #expect(message["data"]?["event_id"] == "$e1")
        }
    }

    @Test func webPushNotificationsStateSygnalsUrgencyAndTopic() async throws {
        let web = RecordingProvider(appID: "im.example.web", platform: .webPush)
        try await Self.withGateway([web]) { client async throws in
            let devices = #"""
                {"app_id":"im.example.web","pushkey":"pk-plain","data":{"endpoint":"https://push.example.org/1","auth":"YXV0aA"}},
                {"app_id":"im.example.web","pushkey":"pk-last","data":{"endpoint":"https://push.example.org/2","auth":"YXV0aA","only_last_per_room":true}}
                """#
            let low = #""event_id":"$low","room_id":"!HWLKabc:localhost","type":"m.room.message","prio":"low""#
            let high = #""event_id":"$high","room_id":"!HWLKabc:localhost","type":"m.room.message","prio":"high""#
            let unstated = #""event_id":"$unstated","room_id":"!HWLKabc:localhost","type":"m.room.message""#
            for event in [low, high, unstated] {
                #expect(try await Self.notify(client, Self.request(devices: devices, event: event)) == (.ok, ["rejected": []]))
            }
            let sent = web.deliveries.map(\.notification)
            try #require(sent.count == 6)
            func urgencies(_ eventID: String) -> [WebPushUrgency?] {
                sent.filter { $0.payload["event_id"] == .string(eventID) }.map(\.webPushUrgency)
            }
            #expect(urgencies("$low") == [.low, .low])
            #expect(urgencies("$high") == [.normal, .normal])
            #expect(urgencies("$unstated") == [.normal, .normal])
            // Python: urlsafe_b64encode(blake2s(b"!HWLKabc:localhost", digest_size=22).digest()).
            let topics = Set(sent.compactMap(\.collapseID))
            #expect(topics == ["RURl-mGrL3Gtdl-_0CCD3j0bD8MwkA=="])
            #expect(sent.filter { $0.collapseID != nil }.count == 3)
        }
    }

    /// Sygnal rejects a pushkey whose `default_payload` is present and not an object, `null` included, and
    /// the homeserver then deletes the pusher for good. Pushgate takes `null` as absent and delivers; other
    /// non-object values are rejected as Sygnal does (APNs and FCM; Web Push ignores them, as Sygnal does).
    @Test func aNullDefaultPayloadIsTakenAsAbsent() async throws {
        let fcm = RecordingProvider(appID: "im.example.android", platform: .fcm)
        let apns = RecordingProvider(appID: "im.example.ios", platform: .apns)
        let web = RecordingProvider(appID: "im.example.web", platform: .webPush)
        try await Self.withGateway([fcm, apns, web]) { client async throws in
            let (status, body) = try await Self.notify(client, Self.request(devices: #"""
                {"app_id":"im.example.android","pushkey":"fcm-null","data":{"default_payload":null}},
                {"app_id":"im.example.android","pushkey":"fcm-text","data":{"default_payload":"text"}},
                {"app_id":"im.example.ios","pushkey":"3q2+7w==","data":{"default_payload":null}},
                {"app_id":"im.example.ios","pushkey":"AAAA","data":{"default_payload":[1]}},
                {"app_id":"im.example.web","pushkey":"web-null","data":{"endpoint":"https://push.example.org/1","auth":"YXV0aA","default_payload":null}},
                {"app_id":"im.example.web","pushkey":"web-text","data":{"endpoint":"https://push.example.org/2","auth":"YXV0aA","default_payload":"text"}}
                """#))
            #expect(status == .ok)
            #expect(body == ["rejected": ["fcm-text", "AAAA"]])
            #expect(fcm.deliveries.map(\.token) == ["fcm-null"])
            #expect(fcm.deliveries.first?.notification.payload["data"]?["event_id"] == "$e1")
            #expect(apns.deliveries.map(\.token) == ["deadbeef"])
            #expect(apns.deliveries.first?.notification.payload["aps"]?["badge"] == 2)
            #expect(web.deliveries.count == 2)
            #expect(web.deliveries.allSatisfy { $0.notification.payload["event_id"] == "$e1" })
        }
    }

    @Test func malformedRequestsGet400InTheMatrixErrorShape() async throws {
        try await Self.withGateway([]) { client async throws in
            let (status, body) = try await Self.notify(client, #"{"notification":{"devices":[]}}"#)
            #expect(status == .badRequest)
            #expect(body == ["errcode": "M_BAD_JSON", "error": "No devices in notification"])
            let (notJSON, notJSONBody) = try await Self.notify(client, "{")
            #expect(notJSON == .badRequest)
            #expect(notJSONBody?["errcode"] == "M_NOT_JSON")
        }
    }

    @Test func subPathsAreAcceptedAndOtherMethodsAreUnrecognized() async throws {
        let fcm = RecordingProvider(appID: "app", platform: .fcm)
        try await Self.withGateway([fcm]) { client async throws in
            let (status, _) = try await Self.notify(client, Self.request(devices: #"{"app_id":"app","pushkey":"pk"}"#), path: "/_matrix/push/v1/notify/extra")
            #expect(status == .ok)
            let get = try await client.execute(uri: "/_matrix/push/v1/notify", method: .get)
            #expect(get.status == .methodNotAllowed)
            #expect(String(buffer: get.body).contains("M_UNRECOGNIZED"))
            // Sygnal answers HEAD with a 500 (a Twisted quirk); here it is an ordinary 405.
            let head = try await client.execute(uri: "/_matrix/push/v1/notify", method: .head)
            #expect(head.status == .methodNotAllowed)
            #expect(head.headers[.allow]?.contains("POST") == true)
            #expect(fcm.deliveries.count == 1)
        }
    }
}
