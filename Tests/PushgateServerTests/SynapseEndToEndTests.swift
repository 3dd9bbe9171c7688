import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateTestSupport
import Testing

/// A real Synapse homeserver (from PyPI) pushing to the real `pushgate serve`, which delivers through its
/// built-in sandbox's Web Push emulator: a message reaches the device with Sygnal's `Urgency`, `TTL` and
/// `Topic` headers, and a pusher whose subscription is gone is deleted by Synapse after Pushgate rejects
/// its pushkey.
@Suite("Synapse end to end", .serialized)
struct SynapseEndToEndTests {
    struct Client {
        let base: String

        func call(_ method: HTTPMethod, _ path: String, token: String? = nil, _ body: JSONValue? = nil) async throws -> (UInt, JSONValue) {
            var request = HTTPClientRequest(url: self.base + path)
            request.method = method
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: try body.encoded()))
            }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let data = try await response.body.collect(upTo: 1 << 20)
            let json = (try? JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: data).utf8))) ?? .null
            return (response.status.code, json)
        }

        func register(_ user: String) async throws -> String {
            let (status, body) = try await self.call(
                .POST, "/_matrix/client/v3/register",
                ["username": .string(user), "password": "correct horse battery staple", "auth": ["type": "m.login.dummy"]]
            )
            guard status == 200, let token = body["access_token"]?.stringValue else {
                throw ProcessError("registering \(user) failed: \(status) \(body)")
            }
            return token
        }
    }

    /// Generates a Synapse configuration in `directory`, starts Synapse on a free loopback port and waits
    /// (up to 90 s) until its client API answers; the caller stops the process.
    static func startHomeserver(python: String, directory: TemporaryDirectory) async throws -> (process: GatewayProcess, client: Client) {
        let generated = try await ExternalProcess.run(python, [
            "-m", "synapse.app.homeserver", "--server-name", "localhost", "--config-path", directory.path("generated.yaml"),
            "--data-directory", directory.url.path, "--generate-config", "--report-stats=no",
        ])
        #expect(generated.status == 0, "\(generated.errors)")
        let homeserverPort = try #require(FreeLoopbackPort.pick())
        let config = try directory.write("homeserver.yaml", Self.homeserverConfig(directory: directory, port: homeserverPort))
        let synapse = try GatewayProcess(
            arguments: ["-m", "synapse.app.homeserver", "--config-path", config], directory: directory.url.path, executable: python
        )
        let client = Client(base: "http://127.0.0.1:\(homeserverPort)")
        let up = try await Self.eventually(timeout: .seconds(90)) { () -> Bool? in
            (try? await client.call(.GET, "/_matrix/client/versions").0) == 200 ? true : nil
        }
        if up != true { synapse.signal(SIGTERM) }
        try #require(up == true, "Synapse did not start: \(synapse.errors.suffix(2000))")
        return (synapse, client)
    }

    static func homeserverConfig(directory: TemporaryDirectory, port: Int) -> String {
        """
        server_name: "localhost"
        pid_file: \(directory.path("homeserver.pid"))
        listeners:
          - port: \(port)
            bind_addresses: ['127.0.0.1']
            type: http
            tls: false
            x_forwarded: false
            resources:
              - names: [client]
                compress: false
        database:
          name: sqlite3
          args:
            database: \(directory.path("homeserver.db"))
        media_store_path: \(directory.path("media_store"))
        signing_key_path: \(directory.path("localhost.signing.key"))
        log_config: \(directory.path("log.config"))
        report_stats: false
        trusted_key_servers: []
        suppress_key_server_warning: true
        enable_registration: true
        enable_registration_without_verification: true
        ip_range_whitelist: ['127.0.0.1']
        rc_message: {per_second: 1000, burst_count: 1000}
        rc_registration: {per_second: 1000, burst_count: 1000}
        rc_joins: {local: {per_second: 1000, burst_count: 1000}}
        rc_login: {address: {per_second: 1000, burst_count: 1000}, account: {per_second: 1000, burst_count: 1000}}
        """
    }

    static func eventually<T>(timeout: Duration = .seconds(30), _ probe: () async throws -> T?) async throws -> T? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try await probe() { return value }
            try await Task.sleep(for: .milliseconds(250))
        }
        return nil
    }

    @Test(.timeLimit(.minutes(3)))
    func aMessageReachesTheDeviceAndADeadPusherIsRemoved() async throws {
        let python = try PythonReference.interpreter()
        let directory = try TemporaryDirectory()

        // Pushgate with no apps: the built-in sandbox and its demo.webpush app.
        let gateway = try GatewayProcess(arguments: ["serve", "--config", try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            """)], directory: directory.url.path)
        // Stopped last, after Synapse; set up here so that it is stopped also when Synapse fails to start.
        defer { gateway.signal(SIGTERM) }
        let gatewayPort = try #require(try await gateway.waitForListeners().first { $0.name == "http" }).port
        let subscription = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: directory.url.appendingPathComponent("pushgate-sandbox/webpush-subscription.json")))
        let endpoint = try #require(subscription["endpoint"]?.stringValue)
        let p256dh = try #require(subscription["keys"]?["p256dh"]?.stringValue)
        let auth = try #require(subscription["keys"]?["auth"]?.stringValue)

        // Synapse, configured for loopback and open registration.
        let (synapse, client) = try await Self.startHomeserver(python: python, directory: directory)
        defer { synapse.signal(SIGTERM) }

        let alice = try await client.register("alice")
        let bob = try await client.register("bob")
        let carol = try await client.register("carol")
        let notifyURL = "http://127.0.0.1:\(gatewayPort)/_matrix/push/v1/notify"
        func pusher(_ pushkey: String, endpoint: String, data extra: [String: JSONValue] = [:]) -> JSONValue {
            var data: [String: JSONValue] = ["url": .string(notifyURL), "endpoint": .string(endpoint), "auth": .string(auth)]
            data.merge(extra) { _, new in new }
            return [
                "kind": "http", "app_id": "demo.webpush", "pushkey": .string(pushkey), "app_display_name": "Pushgate test",
                "device_display_name": "phone", "lang": "en", "append": true, "data": .object(data),
            ]
        }
        let goneKey = p256dh + "-gone"
        // Bob's pusher has `default_payload: null`, which Sygnal would reject (and Synapse then delete);
        // Pushgate treats it as absent and delivers.
        #expect(try await client.call(.POST, "/_matrix/client/v3/pushers/set", token: bob, pusher(p256dh, endpoint: endpoint, data: ["default_payload": .null])).0 == 200)
        let goneEndpoint = endpoint.replacingOccurrences(of: "/push/demo", with: "/push/gone")
        #expect(try await client.call(.POST, "/_matrix/client/v3/pushers/set", token: bob, pusher(goneKey, endpoint: goneEndpoint)).0 == 200)
        // Carol's pusher wants only the last notification per room. It is the same browser subscription,
        // its key written padded (a distinct pushkey, so the duplicate filter keeps both users' pushes).
        let carolKey = p256dh + "="
        let carolData: [String: JSONValue] = ["only_last_per_room": true, "default_payload": ["account": "carol"]]
        #expect(try await client.call(.POST, "/_matrix/client/v3/pushers/set", token: carol, pusher(carolKey, endpoint: endpoint, data: carolData)).0 == 200)

        func join(_ roomID: String, _ token: String) async throws {
            #expect(try await client.call(.POST, "/_matrix/client/v3/join/\(roomID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? roomID)", token: token, [:]).0 == 200)
        }
        func send(_ body: String, to roomID: String, transaction: String) async throws {
            let path = "/_matrix/client/v3/rooms/\(roomID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? roomID)/send/m.room.message/\(transaction)"
            #expect(try await client.call(.PUT, path, token: alice, ["msgtype": "m.text", "body": .string(body)]).0 == 200)
        }
        /// The first delivery to the sandbox's subscription whose decrypted payload `matches`, with its record.
        func delivery(_ matches: (JSONValue) -> Bool) async throws -> (record: JSONValue, payload: JSONValue)? {
            try await Self.eventually { () -> (record: JSONValue, payload: JSONValue)? in
                let (_, deliveries) = try await Client(base: "http://127.0.0.1:\(gatewayPort)").call(.GET, "/sandbox/deliveries")
                guard case .array(let all) = deliveries else { return nil }
                for record in all {
                    guard record["token"] == "demo", record["status"] == 201, let body = record["body"]?.stringValue,
                        let payload = try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8)), matches(payload)
                    else { continue }
                    return (record, payload)
                }
                return nil
            }
        }

        // A direct chat: Synapse sends `prio: high` (the one-to-one rule plays a sound).
        let (created, room) = try await client.call(.POST, "/_matrix/client/v3/createRoom", token: alice, ["invite": ["@bob:localhost"], "is_direct": true])
        #expect(created == 200)
        let roomID = try #require(room["room_id"]?.stringValue)
        try await join(roomID, bob)
        try await send("hello bob", to: roomID, transaction: "t1")

        // The message arrives at the device, decrypted by the emulator, with Sygnal's headers.
        let direct = try await delivery { $0["content"]?["body"] == "hello bob" }
        let (record, payload) = try #require(direct, "no push reached the device; gateway log:\n\(gateway.errors.suffix(3000))")
        #expect(payload["sender"] == "@alice:localhost")
        #expect(payload["room_id"] == .string(roomID))
        #expect(payload["type"] == "m.room.message")
        #expect(payload["unread"] != nil)
        #expect(record["headers"]?["urgency"] == "normal")
        #expect(record["headers"]?["ttl"] == "900")
        #expect(record["headers"]?["topic"] == nil)

        // A group room: a plain message is `prio: low` (no sound), so `Urgency: low`; Carol's pusher gets
        // Sygnal's Topic, the padded base64url of the room id's 22-byte BLAKE2s (32 characters).
        let (groupCreated, group) = try await client.call(.POST, "/_matrix/client/v3/createRoom", token: alice, ["invite": ["@bob:localhost", "@carol:localhost"]])
        #expect(groupCreated == 200)
        let groupID = try #require(group["room_id"]?.stringValue)
        try await join(groupID, bob)
        try await join(groupID, carol)
        try await send("hello everyone", to: groupID, transaction: "t2")
        let toBob = try await delivery { $0["content"]?["body"] == "hello everyone" && $0["account"] == nil }
        let toCarol = try await delivery { $0["content"]?["body"] == "hello everyone" && $0["account"] == "carol" }
        let bobs = try #require(toBob, "no group push for bob; gateway log:\n\(gateway.errors.suffix(3000))")
        let carols = try #require(toCarol, "no group push for carol; gateway log:\n\(gateway.errors.suffix(3000))")
        #expect(bobs.record["headers"]?["urgency"] == "low")
        #expect(bobs.record["headers"]?["topic"] == nil)
        #expect(carols.record["headers"]?["urgency"] == "low")
        #expect(carols.record["headers"]?["ttl"] == "900")
        let sygnalTopic = try await PythonReference.run(
            "import base64, hashlib, sys; print(base64.urlsafe_b64encode(hashlib.blake2s(sys.argv[1].encode(), digest_size=22).digest()).decode())",
            arguments: [groupID]
        )
        #expect(sygnalTopic.count == 32 && sygnalTopic.hasSuffix("=="))
        #expect(carols.record["headers"]?["topic"] == .string(sygnalTopic))

        // Pushgate rejected the gone subscription's pushkey, so Synapse deleted that pusher and kept the other.
        let remaining = try await Self.eventually { () -> [String]? in
            let (_, pushers) = try await client.call(.GET, "/_matrix/client/v3/pushers", token: bob)
            guard case .array(let list)? = pushers["pushers"] else { return nil }
            let keys = list.compactMap { $0["pushkey"]?.stringValue }
            return keys.contains(goneKey) ? nil : keys
        }
        #expect(remaining == [p256dh])
        // Neither pushkey appears in Pushgate's logs.
        #expect(!gateway.errors.contains(p256dh))
    }
}

/// A free TCP port on 127.0.0.1, found by binding port 0 for a moment.
enum FreeLoopbackPort {
    static func pick() -> Int? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { return nil }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
