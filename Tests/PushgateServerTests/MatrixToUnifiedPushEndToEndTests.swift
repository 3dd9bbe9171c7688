import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateTestSupport
import Synchronization
import Testing

/// `pushgate serve` as a UnifiedPush Matrix gateway: a real Synapse pushes to it for a pusher registered
/// as Element X registers one, and the notification reaches the sandbox's distributor emulator with the
/// body and headers UnifiedPush apps expect; an endpoint that answers 404 makes Synapse delete the pusher;
/// and a push server that fails for a while (a restart) loses nothing: the notification is queued and
/// delivered once it is back, while the homeserver had its answer at once.
@Suite("Matrix to UnifiedPush end to end", .serialized)
struct MatrixToUnifiedPushEndToEndTests {
    typealias Client = SynapseEndToEndTests.Client

    @Test(.timeLimit(.minutes(3)))
    func synapsePushesThroughTheGatewayToTheDistributorAndAGoneEndpointLosesItsPusher() async throws {
        let python = try PythonReference.interpreter()
        let directory = try TemporaryDirectory()

        // Pushgate with no apps: the built-in sandbox, its demo.unifiedpush app and its distributor emulator;
        // at debug level, so that every delivery's log line is there to be searched for the endpoint.
        let gateway = try GatewayProcess(arguments: ["serve", "--config", try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json, level: debug}
            database: {url: 'sqlite:store.sqlite'}
            """)], directory: directory.url.path)
        let gatewayPort = try #require(try await gateway.waitForListeners().first { $0.name == "http" }).port
        let endpointFile = directory.url.appendingPathComponent("pushgate-sandbox/unifiedpush-endpoint.txt")
        let endpoint = try String(contentsOf: endpointFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(endpoint.hasSuffix("/up/demo?up=1"))
        let goneEndpoint = endpoint.replacingOccurrences(of: "/up/demo", with: "/up/gone")
        let gatewayClient = Client(base: "http://127.0.0.1:\(gatewayPort)")

        // Element X's discovery: GET on the gateway's notify URL names a Matrix gateway.
        let (discoveryStatus, discovery) = try await gatewayClient.call(.GET, "/_matrix/push/v1/notify")
        #expect(discoveryStatus == 200)
        #expect(discovery["unifiedpush"]?["gateway"] == "matrix")

        let (synapse, client) = try await SynapseEndToEndTests.startHomeserver(python: python, directory: directory)
        defer {
            synapse.signal(SIGTERM)
            gateway.signal(SIGTERM)
        }

        let alice = try await client.register("alice")
        let bob = try await client.register("bob")
        // As Element X registers a UnifiedPush pusher: the endpoint as pushkey, the gateway found by
        // discovery as data.url, event_id_only, and a default_payload carrying its secret.
        func pusher(_ pushkey: String) -> JSONValue {
            [
                "kind": "http", "app_id": "demo.unifiedpush", "pushkey": .string(pushkey), "app_display_name": "Element X",
                "device_display_name": "phone", "lang": "en", "append": true,
                "data": ["url": .string("http://127.0.0.1:\(gatewayPort)/_matrix/push/v1/notify"), "format": "event_id_only", "default_payload": ["cs": "A_SECRET"]],
            ]
        }
        #expect(try await client.call(.POST, "/_matrix/client/v3/pushers/set", token: bob, pusher(endpoint)).0 == 200)
        #expect(try await client.call(.POST, "/_matrix/client/v3/pushers/set", token: bob, pusher(goneEndpoint)).0 == 200)

        let (created, room) = try await client.call(.POST, "/_matrix/client/v3/createRoom", token: alice, ["invite": ["@bob:localhost"], "is_direct": true])
        #expect(created == 200)
        let roomID = try #require(room["room_id"]?.stringValue)
        let joinPath = "/_matrix/client/v3/join/\(roomID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? roomID)"
        #expect(try await client.call(.POST, joinPath, token: bob, [:]).0 == 200)
        let sendPath = "/_matrix/client/v3/rooms/\(roomID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? roomID)/send/m.room.message/t1"
        let (sent, event) = try await client.call(.PUT, sendPath, token: alice, ["msgtype": "m.text", "body": "hello bob"])
        #expect(sent == 200)
        let eventID = try #require(event["event_id"]?.stringValue)

        // The message reaches the distributor: the notification without devices, as a UnifiedPush app reads it.
        let delivered = try await SynapseEndToEndTests.eventually { () -> (record: JSONValue, body: JSONValue)? in
            let (_, deliveries) = try await gatewayClient.call(.GET, "/sandbox/deliveries")
            guard case .array(let all) = deliveries else { return nil }
            for record in all where record["provider"] == "unifiedpush" && record["token"] == "demo" && record["status"] == 201 {
                guard let text = record["body"]?.stringValue, let body = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
                    body["notification"]?["event_id"] == .string(eventID)
                else { continue }
                return (record, body)
            }
            return nil
        }
        let (record, body) = try #require(delivered, "no push reached the distributor; gateway log:\n\(gateway.errors.suffix(3000))")
        #expect(body["notification"]?["room_id"] == .string(roomID))
        #expect(body["notification"]?["counts"]?["unread"] != nil)
        #expect(body["notification"]?["prio"] == "high")
        #expect(body["notification"]?["devices"] == nil)
        #expect(record["headers"]?["ttl"] == "86400")
        #expect(record["headers"]?["content-encoding"] == "aes128gcm")

        // The gone endpoint's pushkey was rejected exactly as Synapse sent it, so Synapse deleted that pusher.
        let remaining = try await SynapseEndToEndTests.eventually { () -> [String]? in
            let (_, pushers) = try await client.call(.GET, "/_matrix/client/v3/pushers", token: bob)
            guard case .array(let list)? = pushers["pushers"] else { return nil }
            let keys = list.compactMap { $0["pushkey"]?.stringValue }
            return keys.contains(goneEndpoint) ? nil : keys
        }
        #expect(remaining == [endpoint])
        // Endpoints are capabilities: never in the logs, though each delivery was logged (with its host).
        // The lines pass through the gateway's log writer and the reader of its standard error first.
        #expect(try await GorushEndToEndTests.eventually(timeout: .seconds(30)) { gateway.errors.contains("unifiedpush delivery") })
        #expect(!gateway.errors.contains(endpoint))
        #expect(!gateway.errors.contains("/up/gone"))
    }

    /// A push server that answers 503 with `Retry-After: 1` twice (restarting), then 201.
    actor RestartingPushServer {
        private(set) var attempts: [String] = []
        func attempt(_ target: String) -> Int {
            self.attempts.append(target)
            return self.attempts.count <= 2 ? 503 : 201
        }
    }

    /// Runs `body` with a push server stub on loopback, whose answer to each request (its target and body)
    /// is `status` (`Retry-After: 1` with a 503), and `pushgate serve` with a `"*"` UnifiedPush app allowed
    /// to reach it.
    static func withGatewayAndPushServer(
        status: @escaping @Sendable (_ target: String, _ body: [UInt8]) async -> Int,
        _ body: @Sendable (_ stubPort: Int, _ gateway: Client, _ process: GatewayProcess) async throws -> Void
    ) async throws {
        let router = Router()
        router.post("/up/**") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 16)
            let code = await status(request.head.path ?? "", Array(bytes.readableBytesView))
            var headers: HTTPFields = [:]
            if code == 503 { headers[.retryAfter] = "1" }
            return Response(status: HTTPResponse.Status(code: code), headers: headers)
        }
        var quiet = Logger(label: "push-server-stub")
        quiet.logLevel = .critical
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: quiet)
        try await app.test(.live) { stub in
            let stubPort = try #require(stub.port)
            let directory = try TemporaryDirectory()
            let gateway = try GatewayProcess(arguments: ["serve", "--config", try directory.write("pushgate.yaml", """
                http: {bind_addresses: ['127.0.0.1'], port: 0}
                log: {format: json}
                database: {url: 'sqlite:store.sqlite'}
                apps:
                  "*":
                    type: unifiedpush
                    allowed_endpoints: ['127.0.0.1:\(stubPort)']
                """)], directory: directory.url.path)
            defer { gateway.signal(SIGTERM) }
            let gatewayPort = try #require(try await gateway.waitForListeners().first { $0.name == "http" }).port
            try await body(stubPort, Client(base: "http://127.0.0.1:\(gatewayPort)"), gateway)
        }
    }

    /// Sends `notification` to one FluffyChat pusher at `pushkey` and expects the answer at once, with
    /// nothing rejected, whatever the push server does later.
    static func notifyAndExpectAnswerAtOnce(_ client: Client, pushkey: String, _ notification: [String: JSONValue]) async throws {
        var notification = notification
        notification["devices"] = [["app_id": "chat.fluffy.fluffychat.ABC", "pushkey": .string(pushkey)]]
        let (status, answer) = try await client.call(.POST, "/_matrix/push/v1/notify", ["notification": .object(notification)])
        #expect(status == 200)
        #expect(answer == ["rejected": []])
    }

    @Test(.timeLimit(.minutes(2)))
    func aPushServerThatFailsForAWhileLosesNothingAndTheHomeserverIsAnsweredAtOnce() async throws {
        let server = RestartingPushServer()
        try await Self.withGatewayAndPushServer(status: { target, _ in await server.attempt(target) }) { stubPort, client, gateway in
            try await Self.notifyAndExpectAnswerAtOnce(
                client, pushkey: "http://127.0.0.1:\(stubPort)/up/restarting?up=1",
                ["event_id": "$e1", "room_id": "!r:localhost", "prio": "high", "counts": ["unread": 1]]
            )
            // The outbox tries again (no sooner than Retry-After, with its backoff) until the push server is back.
            let attempts = try await SynapseEndToEndTests.eventually(timeout: .seconds(60)) { () -> Int? in
                let count = await server.attempts.count
                return count >= 3 ? count : nil
            }
            #expect(attempts == 3, "gateway log:\n\(gateway.errors.suffix(3000))")
            #expect(await server.attempts.allSatisfy { $0 == "/up/restarting?up=1" })
        }
    }

    /// A push server that is restarting at first (503), then refuses bodies over 150 bytes (413).
    actor StrictPushServer {
        private(set) var bodies: [[UInt8]] = []
        func attempt(_ body: [UInt8]) -> Int {
            self.bodies.append(body)
            return self.bodies.count == 1 ? 503 : body.count > 150 ? 413 : 201
        }
    }

    /// A notification queued after a temporary failure that the push server then refuses as too large
    /// goes in the `event_id_only` form when it is tried again, as it would have at once (it was dropped).
    @Test(.timeLimit(.minutes(2)))
    func aQueuedNotificationRefusedAsTooLargeGoesInTheEventIDOnlyForm() async throws {
        let server = StrictPushServer()
        try await Self.withGatewayAndPushServer(status: { _, body in await server.attempt(body) }) { stubPort, client, gateway in
            try await Self.notifyAndExpectAnswerAtOnce(
                client, pushkey: "http://127.0.0.1:\(stubPort)/up/strict?up=1",
                [
                    "event_id": "$e1", "room_id": "!r:localhost", "prio": "high", "counts": ["unread": 1], "sender": "@alice:localhost",
                    "sender_display_name": "Alice", "type": "m.room.message", "content": ["msgtype": "m.text", "body": "a message long enough to pass the limit"],
                ]
            )
            let bodies = try #require(
                try await SynapseEndToEndTests.eventually(timeout: .seconds(60)) { () -> [[UInt8]]? in
                    let bodies = await server.bodies
                    return bodies.count >= 3 ? bodies : nil
                }
            )
            try await Task.sleep(for: .milliseconds(500))
            #expect(await server.bodies.count == 3, "gateway log:\n\(gateway.errors.suffix(3000))")
            #expect(bodies[0] == bodies[1], "the queued notification is the one first sent")
            #expect(bodies[0].count > 150)
            #expect(String(decoding: bodies[2], as: UTF8.self) == #"{"notification":{"counts":{"unread":1},"event_id":"$e1","prio":"high","room_id":"!r:localhost"}}"#)
        }
    }
}
