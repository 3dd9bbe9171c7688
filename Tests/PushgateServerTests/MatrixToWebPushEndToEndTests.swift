import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateProviderSupport
import PushgateSandbox
import PushgateTestSupport
import Synchronization
import Testing

/// A homeserver's notify request through the real `pushgate` binary to the Web Push emulator: the
/// Matrix front end, the dispatcher, the Web Push back end (VAPID, aes128gcm) and the rejection path.
@Suite("Matrix → Web Push, end to end")
struct MatrixToWebPushEndToEndTests {
    @Test func aNotificationArrivesDecryptedAndADeadSubscriptionIsRejected() async throws {
        let log = SandboxDeliveryLog()
        let emulator = WebPushEmulator(log: log)
        let live = emulator.issuer.issue(id: "live")
        let gone = emulator.issuer.issue(id: "gone")
        let room = emulator.issuer.issue(id: "room")
        let port = PortBox()
        let router = Router()
        emulator.addRoutes(to: router) { "http://127.0.0.1:\(port.value)" }
        let pushService = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.value = channel.localAddress?.port ?? 0 }, logger: TestLogging.quiet
        )
        try await RunningServices.with([pushService]) {
            while port.value == 0 { try await Task.sleep(for: .milliseconds(20)) }

            let directory = try TemporaryDirectory()
            let vapid = try directory.write("vapid.pem", P256.Signing.PrivateKey().pemRepresentation)
            let config = try directory.write("sygnal.yaml", """
                http: {bind_addresses: ['127.0.0.1'], port: 0}
                log: {format: json}
                database: {url: 'sqlite:store.sqlite'}
                apps:
                  im.example.web:
                    type: webpush
                    vapid_private_key: \(vapid)
                    vapid_contact_email: ops@example.org
                    allowed_endpoints: ['127.0.0.1:*']
                """)
            let gateway = try GatewayProcess(arguments: ["serve"], environment: ["SYGNAL_CONF": config], directory: directory.url.path)
            let listener = try #require(try await gateway.waitForListeners().first)

            func device(_ subscription: WebPushSubscriptionIssuer.Subscription, data extra: String = "") -> String {
                #"{"app_id":"im.example.web","pushkey":"\#(Base64URL.encode(subscription.privateKey.publicKey.x963Representation))","data":{"endpoint":"http://127.0.0.1:\#(port.value)/push/\#(subscription.id)","auth":"\#(Base64URL.encode(subscription.authSecret))"\#(extra)}}"#
            }
            let body = #"""
                {"notification":{"event_id":"$ev1","room_id":"!room:example.org","type":"m.room.message","sender":"@alice:example.org",
                 "sender_display_name":"Alice","room_name":"Room","prio":"high","content":{"msgtype":"m.text","body":"hello"},
                 "counts":{"unread":2},"devices":[\#(device(live)),\#(device(gone))]}}
                """#
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(listener.port)/_matrix/push/v1/notify")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let answer = try await response.body.collect(upTo: 1 << 16)
            #expect(response.status == .ok)
            let rejected = try JSONDecoder().decode([String: [String]].self, from: Data(String(buffer: answer).utf8))
            #expect(rejected == ["rejected": [Base64URL.encode(gone.privateKey.publicKey.x963Representation)]])

            let delivered = try #require(log.all.first { $0.token == "live" })
            #expect(delivered.status == 201)
            // Sygnal's headers: the app's TTL, `Urgency: normal` for `prio: high`, no Topic.
            #expect(delivered.headers["ttl"] == "900")
            #expect(delivered.headers["urgency"] == "normal")
            #expect(delivered.headers["topic"] == nil)
            let payload = try JSONDecoder().decode(JSONValue.self, from: Data(delivered.body.utf8))
            #expect(payload["event_id"] == "$ev1")
            #expect(payload["sender_display_name"] == "Alice")
            #expect(payload["unread"] == 2)
            #expect(payload["content"]?["body"] == "hello")
            // `prio: low` gives `Urgency: low`; an `only_last_per_room` pusher gets Sygnal's Topic for the
            // room, exactly: padded base64url of the 22-byte BLAKE2s of the room id.
            let lowBody = #"""
                {"notification":{"event_id":"$ev2","room_id":"!room:example.org","type":"m.room.message","sender":"@alice:example.org",
                 "prio":"low","content":{"msgtype":"m.text","body":"later"},"counts":{"unread":3},
                 "devices":[\#(device(live)),\#(device(room, data: #","only_last_per_room":true"#))]}}
                """#
            request.body = .bytes(ByteBuffer(string: lowBody))
            let lowResponse = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(lowResponse.status == .ok)
            let lowAnswer = try await lowResponse.body.collect(upTo: 1 << 16)
            #expect(try JSONDecoder().decode([String: [String]].self, from: Data(String(buffer: lowAnswer).utf8)) == ["rejected": []])
            let low = try #require(log.all.first { $0.token == "live" && $0.body.contains("$ev2") })
            #expect(low.status == 201)
            #expect(low.headers["urgency"] == "low")
            #expect(low.headers["topic"] == nil)
            let collapsing = try #require(log.all.first { $0.token == "room" })
            #expect(collapsing.status == 201)
            #expect(collapsing.headers["urgency"] == "low")
            #expect(collapsing.headers["ttl"] == "900")
            // Python: base64.urlsafe_b64encode(hashlib.blake2s(b"!room:example.org", digest_size=22).digest()).
            #expect(collapsing.headers["topic"] == "wMM9sx0_4uCn3aAmE6newKcNvYOuTQ==")
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(collapsing.body.utf8))["event_id"] == "$ev2")

            // Neither the pushkey nor the endpoint appears in the gateway's logs.
            #expect(!gateway.errors.contains(Base64URL.encode(live.privateKey.publicKey.x963Representation)))
            #expect(!gateway.errors.contains("/push/live"))

            gateway.signal(SIGTERM)
            #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
        }
    }
}

/// A port learned once the server is listening.
final class PortBox: Sendable {
    private let stored = Mutex(0)
    var value: Int {
        get { self.stored.withLock { $0 } }
        set { self.stored.withLock { $0 = newValue } }
    }
}
