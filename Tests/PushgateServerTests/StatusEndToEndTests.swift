import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateSandbox
import PushgateStatusWire
import Synchronization
import PushgateTestSupport
import Testing

/// The real binary as a Status push notification server: an independent Python client (coincurve,
/// pycryptodome, protobuf) builds every message as status-go does and talks through its own node of an
/// emulated Waku network (nwaku's REST API and cache); the server polls another node and delivers to the
/// sandbox's provider emulators.
@Suite("Status push notification server, end to end")
struct StatusEndToEndTests {
    static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("StatusClient/status_client.py").path
    static let pubsub = "/waku/2/rs/16/32"
    static let serverSecret = String(repeating: "22", count: 32)
    static let serverKey = "02466d7fcae563e5cb09a0d1870bb580344804617879a14949cf22285f1bae3f27"
    static let alice = String(repeating: "11", count: 32)
    static let aliceKey = "034f355bdcb7cc0af728ef3cceb9615d90684bb5b2ca5f859ab0f0b704075871aa"
    static let bob = String(repeating: "55", count: 32)
    static let bobEphemeral = String(repeating: "66", count: 32)
    static let apnsToken = String(repeating: "a1", count: 32)
    static let installation1 = "c6ae4fde-bb65-11ea-b3de-0242ac130004"
    static let installation2 = "d6ae4fde-bb65-11ea-b3de-0242ac130004"
    static let installation3 = "e6ae4fde-bb65-11ea-b3de-0242ac130004"
    static let token1 = "b6ae4fde-bb65-11ea-b3de-0242ac130004"
    static let token2 = "a6ae4fde-bb65-11ea-b3de-0242ac130004"

    /// Runs the Python client; returns its JSON answer.
    static func run(_ command: String, _ arguments: [String: Any]) async throws -> [String: Any] {
        let text = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self)
        let result = try await ExternalProcess.run(try PythonReference.interpreter(), [Self.client, command, text])
        guard result.status == 0 else { throw ProcessError("status_client.py \(command) failed: \(result.errors)") }
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }

    struct Network {
        let emulator: WakuNetworkEmulator
        let serverPort: Int
        let clientPort: Int
        var clientURL: String { "http://127.0.0.1:\(self.clientPort)" }
    }

    /// Two nodes on one emulated network, the gateway on the first; `body` runs while they serve.
    static func withNetwork(_ body: (Network) async throws -> Void) async throws {
        let emulator = WakuNetworkEmulator(logger: TestLogging.quiet)
        let serverPort = try #require(FreePort.pick())
        let clientPort = try #require(FreePort.pick(avoiding: [serverPort]))
        let serverNode = emulator.makeNode(name: "server").makeApplication(host: "127.0.0.1", port: serverPort)
        let clientNode = emulator.makeNode(name: "client").makeApplication(host: "127.0.0.1", port: clientPort)
        try await RunningServices.with([serverNode, clientNode]) {
            let network = Network(emulator: emulator, serverPort: serverPort, clientPort: clientPort)
            // The client's node must be subscribed to hear answers.
            _ = try await Self.waitFor { try await Self.subscribe(network.clientURL) }
            try await body(network)
        }
    }

    static func subscribe(_ url: String) async throws -> Bool {
        var request = HTTPClientRequest(url: url + "/relay/v1/subscriptions")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "[\"\(Self.pubsub)\"]"))
        let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(5))
        return response?.status == .ok
    }

    static func waitFor(_ condition: () async throws -> Bool) async throws -> Bool {
        try await GorushEndToEndTests.eventually(condition)
    }

    static func startGateway(_ network: Network, directory: TemporaryDirectory, extra: String = "") async throws -> (GatewayProcess, Int) {
        let keyFile = try directory.write("status.key", "0x" + Self.serverSecret + "\n")
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            status:
              waku_rest_url: http://127.0.0.1:\(network.serverPort)
              identity_key_file: \(keyFile)
              ios_app: demo.apns
              android_app: demo.fcm
              poll_interval_ms: 20
            \(extra)
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let port = try #require(try await gateway.waitForListeners().first).port
        // The server logs its key once it has subscribed its node.
        #expect(try await Self.waitFor { gateway.logEvents.contains { $0["msg"] == "status: subscribed to the Waku node" } })
        #expect(gateway.logEvents.contains { $0["msg"] == "status: push notification server ready" && $0["public_key"] == "0x" + Self.serverKey })
        return (gateway, port)
    }

    func base(_ network: Network) -> [String: Any] {
        ["rest": network.clientURL, "pubsub": Self.pubsub, "server_key": Self.serverKey, "timeout": 15]
    }

    func register(_ network: Network, installation: String, version: Int, extra: [String: Any] = [:]) async throws -> [String: Any] {
        var arguments = self.base(network).merging([
            "identity": Self.alice, "installation_id": installation, "access_token": Self.token1, "token_type": 1, "device_token": Self.apnsToken,
            "version": version, "apn_topic": "im.pushgate.sandbox",
        ]) { _, new in new }
        arguments.merge(extra) { _, new in new }
        return try await Self.run("register", arguments)
    }

    func push(_ network: Network, messageID: String, requests: [[String: Any]], repeat count: Int = 1) async throws -> [[String: Any]] {
        let answer = try await Self.run("push", self.base(network).merging([
            "identity": Self.bob, "ephemeral": Self.bobEphemeral, "message_id": messageID, "requests": requests, "repeat": count, "settle": 1.5,
        ]) { _, new in new })
        return answer["answers"] as? [[String: Any]] ?? []
    }

    @Test func aStatusGoClientRegistersQueriesAndIsNotifiedThroughWaku() async throws {
        try await Self.withNetwork { network in
            let directory = try TemporaryDirectory()
            let (gateway, port) = try await Self.startGateway(network, directory: directory)
            defer { gateway.kill() }
            let bobKey = try await Self.run("publickey", ["secret": Self.bob])
            let bobPublic = try #require(bobKey["compressed"] as? String)
            func bobToAlice(_ installation: String, token: String = Self.token1, chat: String = "chat-1", type: Int = 1) -> [String: Any] {
                ["target_key": Self.aliceKey, "installation_id": installation, "access_token": token, "chat": chat, "type": type, "author_key": bobPublic]
            }

            // Registration: answered on Alice's partitioned topic, signed twice by the server, as clients need.
            let first = try await self.register(network, installation: Self.installation1, version: 1)
            #expect(first["answered"] as? Bool == true)
            #expect(first["success"] as? Bool == true && first["request_id_matches"] as? Bool == true)
            #expect(first["amm_signer_is_server"] as? Bool == true && first["waku_signer_is_server"] as? Bool == true)
            #expect(first["version"] as? Int == 1 && first["ephemeral"] as? Bool == false && first["frame_multiple_of_256"] as? Bool == true)
            #expect((first["timestamp"] as? Int ?? 0) > 1_000_000_000_000_000_000, "nanoseconds")
            let stale = try await self.register(network, installation: Self.installation1, version: 1)
            #expect(stale["success"] as? Bool == false && stale["error"] as? Int == 2, "VERSION_MISMATCH")
            // A registration labelled version 0, as status-go 2.40 and later label encrypted messages.
            let contactsOnly = try await self.register(network, installation: Self.installation2, version: 1, extra: [
                "waku_version": 0, "access_token": Self.token2, "token_type": 2, "device_token": "fcm-alice", "allow_from_contacts_only": true, "allowed_key_list": ["0102"],
            ])
            #expect(contactsOnly["success"] as? Bool == true)
            let noGrant = try await self.register(network, installation: Self.installation3, version: 1, extra: ["access_token": "not-a-uuid"])
            #expect(noGrant["success"] as? Bool == false && noGrant["error"] as? Int == 1, "MALFORMED_MESSAGE")

            // Query by Bob, on Alice's query topic, answered to Bob's ephemeral key.
            let query = try await Self.run("query", self.base(network).merging(["identity": Self.bob, "ephemeral": Self.bobEphemeral, "target_key": Self.aliceKey]) { _, new in new })
            #expect(query["answered"] as? Bool == true && query["success"] as? Bool == true && query["message_id_matches"] as? Bool == true)
            let info = try #require(query["info"] as? [[String: Any]])
            let byInstallation = Dictionary(uniqueKeysWithValues: info.map { ($0["installation_id"] as? String ?? "", $0) })
            #expect(Set(byInstallation.keys) == [Self.installation1, Self.installation2])
            #expect(byInstallation[Self.installation1]?["access_token"] as? String == Self.token1)
            #expect(byInstallation[Self.installation1]?["grant_verifies"] as? Bool == true)
            #expect(byInstallation[Self.installation2]?["access_token"] as? String == "")
            #expect(byInstallation[Self.installation2]?["allowed_key_list"] as? [String] == ["0102"])

            // Push: one answer, reports in order, one delivery each for the two registered devices.
            let answers = try await self.push(network, messageID: String(repeating: "ab", count: 32), requests: [
                bobToAlice(Self.installation1), bobToAlice(Self.installation2, token: Self.token2),
                bobToAlice(Self.installation1, token: Self.token2), bobToAlice(Self.installation3),
            ], repeat: 2)
            #expect(answers.count == 1, "a repeated push request is handled once")
            let reports = try #require(answers.first?["reports"] as? [[String: Any]])
            #expect(reports.map { $0["success"] as? Bool } == [true, true, false, false])
            #expect(reports.map { $0["error"] as? Int } == [0, 0, 1, 3], "WRONG_TOKEN, NOT_REGISTERED")
            #expect(answers.first?["message_id_matches"] as? Bool == true && answers.first?["amm_signer_is_server"] as? Bool == true)
            #expect(try await Self.waitFor { try await NextcloudEndToEndTests.deliveries(port).count == 2 })
            let deliveries = try await NextcloudEndToEndTests.deliveries(port)
            let chatID = try #require(byInstallation[Self.installation1]?["public_key"] as? String)
            let apns = try #require(deliveries.first { $0["token"]?.stringValue == Self.apnsToken })
            #expect(apns["status"] == 200)
            #expect(apns["headers"]?["apns-topic"] == "im.pushgate.sandbox")
            #expect(apns["headers"]?["apns-push-type"] == "alert")
            #expect(apns["headers"]?["apns-priority"] == "10")
            let apnsBody = try NextcloudEndToEndTests.json(apns["body"]?.stringValue ?? "")
            #expect((apnsBody["aps"] as? [String: Any])?["alert"] as? String == "New message in Messenger")
            #expect((apnsBody["aps"] as? [String: Any])?["content-available"] as? Int == 1)
            #expect((apnsBody["aps"] as? [String: Any])?["sound"] as? String == "default")
            #expect(apnsBody["encryptedMessage"] as? String == "0x")
            #expect(apnsBody["publicKey"] as? String == "0x" + chatID)
            #expect((apnsBody["chatId"] as? String)?.count == 130)
            #expect(apnsBody["deepLink"] as? String == "status-app://chats")
            let fcm = try #require(deliveries.first { $0["token"]?.stringValue == "fcm-alice" })
            let fcmBody = try NextcloudEndToEndTests.json(fcm["body"]?.stringValue ?? "")
            #expect((fcmBody["notification"] as? [String: Any])?["body"] as? String == "New message in Messenger")
            #expect((fcmBody["data"] as? [String: Any])?["publicKey"] as? String == "0x" + chatID)
            #expect((fcmBody["data"] as? [String: Any])?["deepLink"] == nil, "the deep link is for APNs tokens")

            // Filters: a mention outside the allowed chats is reported as sent but not delivered.
            let mention = try await self.push(network, messageID: String(repeating: "cd", count: 32), requests: [bobToAlice(Self.installation1, type: 2)])
            #expect((mention.first?["reports"] as? [[String: Any]])?.map { $0["success"] as? Bool } == [true])

            // Unregister: the device is no longer notified.
            let unregister = try await self.register(network, installation: Self.installation1, version: 2, extra: ["unregister": true, "access_token": "", "device_token": ""])
            #expect(unregister["success"] as? Bool == true)
            let afterUnregister = try await self.push(network, messageID: String(repeating: "ef", count: 32), requests: [bobToAlice(Self.installation1)])
            #expect((afterUnregister.first?["reports"] as? [[String: Any]])?.map { $0["error"] as? Int } == [3])

            // A dead token drops its registration (status-go never does).
            let dead = try await self.register(network, installation: Self.installation3, version: 1, extra: ["device_token": "dead" + String(repeating: "0", count: 60)])
            #expect(dead["success"] as? Bool == true)
            let toDead = try await self.push(network, messageID: String(repeating: "12", count: 32), requests: [bobToAlice(Self.installation3)])
            #expect((toDead.first?["reports"] as? [[String: Any]])?.map { $0["success"] as? Bool } == [true])
            #expect(try await Self.waitFor {
                let again = try await self.push(network, messageID: String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(32)) + "00000000000000000000000000000000", requests: [bobToAlice(Self.installation3)])
                return (again.first?["reports"] as? [[String: Any]])?.first?["error"] as? Int == 3
            })
            #expect(try await NextcloudEndToEndTests.deliveries(port).count >= 3)
            #expect(try await NextcloudEndToEndTests.deliveries(port).count(where: { $0["status"] == 200 }) == 2, "the filtered mention and the refused requests reached no device")

            let metrics = try await GorushEndToEndTests.get(port, "/metrics").body
            #expect(metrics.contains("pushgate_status_registrations_total{result=\"registered\"}"))
            #expect(metrics.contains("pushgate_status_messages_duplicate_total"))
            // At start-up the server asked its node's store for what it may have missed.
            #expect(metrics.contains(#"pushgate_status_backfills_total{reason="start_up"} 1"#))
            #expect(!metrics.contains("pushgate_status_backfill_queries_total 0") && metrics.contains("pushgate_status_backfill_queries_total"))
            #expect(!gateway.errors.contains(Self.alice) && !gateway.errors.contains(Self.serverSecret), "no secret in the logs")
            gateway.signal(SIGTERM)
            #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
        }
    }

    /// With `gorush_url`, the server forwards as status-go does: one POST of the gorush request, in the
    /// generation `payload_style` names (here the older one), and delivers nothing itself.
    @Test func withAGorushURLTheRequestIsForwardedAsStatusGoSendsIt() async throws {
        let received = Mutex<[(body: String, contentType: String)]>([])
        let router = Router()
        router.post("/api/push") { request, _ -> Response in
            let body = String(buffer: try await request.body.collect(upTo: 1 << 20))
            received.withLock { $0.append((body, request.headers[.contentType] ?? "")) }
            return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: #"{"counts":1,"logs":[],"success":"ok"}"#)))
        }
        let receiverPort = PortBox()
        let receiver = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in receiverPort.value = channel.localAddress?.port ?? 0 }, logger: TestLogging.quiet
        )
        try await RunningServices.with([receiver]) {
            while receiverPort.value == 0 { try await Task.sleep(for: .milliseconds(20)) }
            try await Self.withNetwork { network in
                let directory = try TemporaryDirectory()
                let (gateway, port) = try await Self.startGateway(network, directory: directory, extra: """
                      payload_style: legacy
                      gorush_url: http://127.0.0.1:\(receiverPort.value)
                    """)
                defer { gateway.kill() }
                #expect(try await self.register(network, installation: Self.installation1, version: 1)["success"] as? Bool == true)
                let bob = try #require(try await Self.run("publickey", ["secret": Self.bob])["compressed"] as? String)
                let answers = try await self.push(network, messageID: String(repeating: "ab", count: 32), requests: [[
                    "target_key": Self.aliceKey, "installation_id": Self.installation1, "access_token": Self.token1, "chat": "chat-1", "type": 1,
                    "author_key": bob,
                ]])
                #expect((answers.first?["reports"] as? [[String: Any]])?.map { $0["success"] as? Bool } == [true])
                #expect(try await Self.waitFor { received.withLock { $0.count } == 1 })
                let chatID = "0x" + Hex.lowercase(Keccak.shake256(Array("chat-1".utf8), outputCount: 64))
                let publicKey = "0x" + Hex.lowercase(StatusTopic.keyHash(try Secp256k1.PublicKey(bytes: try #require(Hex.decode(Self.aliceKey)))))
                let expected = #"{"notifications":[{"tokens":["\#(Self.apnsToken)"],"platform":1,"message":"You have a new message","topic":"im.pushgate.sandbox","data":{"encryptedMessage":"0x","chatId":"\#(chatID)","publicKey":"\#(publicKey)"}}]}"#
                let post = try #require(received.withLock { $0.first })
                #expect(post.body == expected)
                #expect(post.contentType.hasPrefix("application/json"))
                try await Task.sleep(for: .milliseconds(500))
                #expect(received.withLock { $0.count } == 1)
                #expect(try await NextcloudEndToEndTests.deliveries(port).isEmpty, "forwarded, not delivered")
                gateway.signal(SIGTERM)
                #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
            }
        }
    }
}
