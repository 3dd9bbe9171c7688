import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateProviderSupport
import PushgateSandbox
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
        let port = PortBox()
        let router = Router()
        emulator.addRoutes(to: router) { "http://127.0.0.1:\(port.value)" }
        let pushService = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.value = channel.localAddress?.port ?? 0 }, logger: TestLogging.quiet
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await pushService.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
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

            func device(_ subscription: WebPushSubscriptionIssuer.Subscription) -> String {
                #"{"app_id":"im.example.web","pushkey":"\#(Base64URL.encode(subscription.privateKey.publicKey.x963Representation))","data":{"endpoint":"http://127.0.0.1:\#(port.value)/push/\#(subscription.id)","auth":"\#(Base64URL.encode(subscription.authSecret))"}}"#
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
            #expect(delivered.headers["ttl"] == "900")
            let payload = try JSONDecoder().decode(JSONValue.self, from: Data(delivered.body.utf8))
            #expect(payload["event_id"] == "$ev1")
            #expect(payload["sender_display_name"] == "Alice")
            #expect(payload["unread"] == 2)
            #expect(payload["content"]?["body"] == "hello")
            // Neither the pushkey nor the endpoint appears in the gateway's logs.
            #expect(!gateway.errors.contains(Base64URL.encode(live.privateKey.publicKey.x963Representation)))
            #expect(!gateway.errors.contains("/push/live"))

            gateway.signal(SIGTERM)
            #expect(await gateway.waitForExit(timeout: .seconds(10)) == 0)
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
