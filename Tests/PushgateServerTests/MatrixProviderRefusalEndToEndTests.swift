import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateProviderSupport
import PushgateSandbox
import Testing

/// A provider refusing a notification for a reason that is not about the token, through the real
/// `pushgate` binary and the sandbox's provider emulators: the homeserver gets 502 (as from Sygnal, which
/// raises `NotificationDispatchException`), never `200 {"rejected": []}` with the notification lost, the
/// pushkey stays out of `rejected`, and a retry of the same event is sent again (the duplicate filter
/// records only deliveries).
@Suite("Matrix: provider refusals answer 502, end to end", .serialized)
struct MatrixProviderRefusalEndToEndTests {
    /// The emulators and the gateway in front of them.
    struct Setup {
        let gateway: GatewayProcess
        let port: Int
        let log: SandboxDeliveryLog
        let fcm: FCMEmulator
        let webPush: WebPushEmulator
        let webPushPort: Int

        /// Posts one notification for one device; the status and the decoded body.
        func notify(eventID: String, device: String) async throws -> (UInt, JSONValue?) {
            let body = #"""
                {"notification":{"event_id":"\#(eventID)","room_id":"!room:example.org","type":"m.room.message","sender":"@alice:example.org",
                 "prio":"high","content":{"msgtype":"m.text","body":"hello"},"counts":{"unread":1},"devices":[\#(device)]}}
                """#
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(self.port)/_matrix/push/v1/notify")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let answer = try await response.body.collect(upTo: 1 << 16)
            return (response.status.code, try? JSONParser.parse(Array(buffer: answer)))
        }

        /// What the emulators received for `token`, as (status, reason).
        func received(_ token: String) -> [(status: Int, reason: String?)] {
            self.log.all.filter { $0.token == token }.map { ($0.status, $0.reason) }
        }
    }

    /// An APNs pushkey as iOS clients register it (base64 of the token's bytes) and the hex token it becomes.
    static func apnsPushkey(_ byte: UInt8) -> (pushkey: String, token: String) {
        let bytes = [UInt8](repeating: byte, count: 32)
        return (Data(bytes).base64EncodedString(), Hex.lowercase(bytes))
    }

    static let big = String(repeating: "x", count: 5000)

    static func withSetup(_ body: @Sendable (Setup) async throws -> Void) async throws {
        let log = SandboxDeliveryLog()
        let apns = try APNsEmulator(bundleID: "im.example.ios", log: log)
        let fcm = try FCMEmulator(log: log)
        let webPush = WebPushEmulator(log: log)
        let apnsPort = PortBox(), fcmPort = PortBox(), webPushPort = PortBox()
        let apnsApplication = try apns.makeApplication(logger: TestLogging.quiet) { apnsPort.value = $0 }
        let fcmServer = FCMEmulatorServer(emulator: fcm, logger: TestLogging.quiet) { fcmPort.value = $0 }
        // The push service believes it is reached at another origin, so every VAPID signature the gateway
        // makes (audience http://127.0.0.1:<port>) is refused with 401, as a push service refuses a JWT
        // signed for another audience.
        let webPushApplication = webPush.makeApplication(origin: "https://push.example.org", logger: TestLogging.quiet) { webPushPort.value = $0 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await apnsApplication.runService(gracefulShutdownSignals: []) }
            group.addTask { try await fcmServer.run() }
            group.addTask { try await webPushApplication.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
            while apnsPort.value == 0 || fcmPort.value == 0 || webPushPort.value == 0 { try await Task.sleep(for: .milliseconds(20)) }

            let directory = try TemporaryDirectory()
            let key = try directory.write("apns.p8", apns.privateKeyPEM)
            // A key Apple never issued for this key id: every provider token it signs is refused.
            let forged = try directory.write("forged.p8", P256.Signing.PrivateKey().pemRepresentation)
            let ca = try directory.write("ca.pem", apns.certificateAuthority.caCertificatePEM)
            try fcm.writeServiceAccount(baseURL: "http://127.0.0.1:\(fcmPort.value)", to: directory.path("fcm.json"))
            let vapid = try directory.write("vapid.pem", P256.Signing.PrivateKey().pemRepresentation)
            let apnsApp = { (keyfile: String) in
                "{type: apns, keyfile: \(keyfile), key_id: \(apns.keyID), team_id: \(apns.teamID), topic: im.example.ios, base_url: 'https://127.0.0.1:\(apnsPort.value)', ca_file: \(ca)}"
            }
            let fcmApp = { (project: String) in
                "{type: gcm, api_version: v1, project_id: \(project), service_account_file: \(directory.path("fcm.json")), base_url: 'http://127.0.0.1:\(fcmPort.value)'}"
            }
            let config = try directory.write("sygnal.yaml", """
                http: {bind_addresses: ['127.0.0.1'], port: 0}
                log: {format: json}
                database: {url: 'sqlite:store.sqlite'}
                apps:
                  im.example.ios: \(apnsApp(key))
                  im.example.ios.forged: \(apnsApp(forged))
                  im.example.android: \(fcmApp(fcm.projectID))
                  im.example.android.elsewhere: \(fcmApp("someone-elses-project"))
                  im.example.web: {type: webpush, vapid_private_key: \(vapid), vapid_contact_email: ops@example.org, allowed_endpoints: ['127.0.0.1:*']}
                """)
            let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
            defer { gateway.signal(SIGTERM) }
            let listener = try #require(try await gateway.waitForListeners().first)
            try await body(Setup(gateway: gateway, port: listener.port, log: log, fcm: fcm, webPush: webPush, webPushPort: webPushPort.value))
        }
    }

    static func expect502(_ answer: (UInt, JSONValue?), _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.0 == 502, comment, sourceLocation: sourceLocation)
        #expect(answer.1?["errcode"] == "M_UNKNOWN", comment, sourceLocation: sourceLocation)
        #expect(answer.1?["rejected"] == nil, comment, sourceLocation: sourceLocation)
    }

    /// APNs: 403 `InvalidProviderToken` (a key APNs does not know) and `PayloadTooLarge` (a
    /// `default_payload` nothing can shorten, refused before sending as APNs would answer 413).
    @Test(.timeLimit(.minutes(3)))
    func apnsRefusalsAnswer502() async throws {
        try await Self.withSetup { setup in
            // The control: the same emulator and topic with the issued key deliver.
            let good = Self.apnsPushkey(0xa1)
            let delivered = try await setup.notify(eventID: "$good", device: #"{"app_id":"im.example.ios","pushkey":"\#(good.pushkey)"}"#)
            #expect(delivered.0 == 200, "\(setup.gateway.errors.suffix(2000))")
            #expect(delivered.1 == ["rejected": []])

            let forged = Self.apnsPushkey(0xa2)
            let device = #"{"app_id":"im.example.ios.forged","pushkey":"\#(forged.pushkey)"}"#
            Self.expect502(try await setup.notify(eventID: "$forged", device: device), "InvalidProviderToken")
            #expect(setup.received(forged.token).map(\.status) == [403])
            #expect(setup.received(forged.token).first?.reason == "InvalidProviderToken")
            // The homeserver's retry of the same event fails too (a refusal is not a delivery), at once: the
            // app's credentials are failing, so nothing goes to APNs until a probe a minute later.
            Self.expect502(try await setup.notify(eventID: "$forged", device: device), "InvalidProviderToken, retried")
            #expect(setup.received(forged.token).count == 1)
            let metrics = try await GorushEndToEndTests.get(setup.port, "/metrics").body
            #expect(metrics.contains(#"pushgate_provider_credentials_failing{app="im.example.ios.forged"} 1"#))
            #expect(metrics.contains(#"pushgate_provider_credentials_failing{app="im.example.ios"} 0"#))
            #expect(setup.gateway.errors.contains("credentials failing"))

            let large = Self.apnsPushkey(0xa3)
            let largeDevice = #"{"app_id":"im.example.ios","pushkey":"\#(large.pushkey)","data":{"default_payload":{"blob":"\#(Self.big)"}}}"#
            Self.expect502(try await setup.notify(eventID: "$large", device: largeDevice), "PayloadTooLarge")
            #expect(setup.received(large.token).isEmpty)
        }
    }

    /// FCM: 400 `INVALID_ARGUMENT` about the message (a data key FCM reserves), 403 `PERMISSION_DENIED`
    /// (a project the service account may not send for) and 401 `UNAUTHENTICATED` (access tokens refused,
    /// a fresh one too).
    @Test(.timeLimit(.minutes(3)))
    func fcmRefusalsAnswer502() async throws {
        try await Self.withSetup { setup in
            let delivered = try await setup.notify(eventID: "$good", device: #"{"app_id":"im.example.android","pushkey":"fcm-good"}"#)
            #expect(delivered.0 == 200, "\(setup.gateway.errors.suffix(2000))")
            #expect(delivered.1 == ["rejected": []])

            let reserved = #"{"app_id":"im.example.android","pushkey":"fcm-reserved","data":{"default_payload":{"from":"x"}}}"#
            Self.expect502(try await setup.notify(eventID: "$reserved", device: reserved), "FCM 400")
            #expect(setup.received("fcm-reserved").map(\.status) == [400])
            Self.expect502(try await setup.notify(eventID: "$reserved", device: reserved), "FCM 400, retried")
            #expect(setup.received("fcm-reserved").count == 2)

            let elsewhere = #"{"app_id":"im.example.android.elsewhere","pushkey":"fcm-elsewhere"}"#
            Self.expect502(try await setup.notify(eventID: "$elsewhere", device: elsewhere), "FCM 403")
            #expect(setup.received("fcm-elsewhere").map(\.status) == [403])

            setup.fcm.refusesAllAccessTokens = true
            Self.expect502(try await setup.notify(eventID: "$unauthenticated", device: #"{"app_id":"im.example.android","pushkey":"fcm-unauthenticated"}"#), "FCM 401")
            let unauthenticated = setup.received("fcm-unauthenticated")
            #expect(!unauthenticated.isEmpty && unauthenticated.allSatisfy { $0.status == 401 })
        }
    }

    /// Web Push: a refusal other than 404/410 (401 for a VAPID signature the push service does not
    /// accept; a payload too large to send). Sygnal logs these and answers 200; Pushgate answers 502.
    @Test(.timeLimit(.minutes(3)))
    func webPushRefusalsAnswer502() async throws {
        try await Self.withSetup { setup in
            func device(_ id: String, extra: String = "") -> String {
                let subscription = setup.webPush.issuer.issue(id: id)
                let pushkey = Base64URL.encode(subscription.privateKey.publicKey.x963Representation)
                return #"{"app_id":"im.example.web","pushkey":"\#(pushkey)","data":{"endpoint":"http://127.0.0.1:\#(setup.webPushPort)/push/\#(id)","auth":"\#(Base64URL.encode(subscription.authSecret))"\#(extra)}}"#
            }
            // A gone subscription is still the pushkey's fault: rejected, 200.
            let gone = device("gone")
            let goneAnswer = try await setup.notify(eventID: "$gone", device: gone)
            #expect(goneAnswer.0 == 200, "\(setup.gateway.errors.suffix(2000))")
            let gonePushkey = try #require(setup.webPush.issuer.subscription(id: "gone")).privateKey.publicKey.x963Representation
            #expect(goneAnswer.1 == ["rejected": [.string(Base64URL.encode(gonePushkey))]])

            let unsigned = device("unsigned")
            Self.expect502(try await setup.notify(eventID: "$unsigned", device: unsigned), "Web Push 401")
            #expect(setup.received("unsigned").map(\.status) == [401])

            let large = device("large", extra: #","default_payload":{"blob":"\#(Self.big)"}"#)
            Self.expect502(try await setup.notify(eventID: "$large", device: large), "Web Push payload too large")
            #expect(setup.received("large").isEmpty)
        }
    }
}
