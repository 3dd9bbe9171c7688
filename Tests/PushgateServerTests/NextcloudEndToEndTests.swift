import AsyncHTTPClient
import Crypto
import CryptoExtras
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import PushgateCore
import PushgateNextcloudSDK
import PushgateTestSupport
import Testing

/// Devices using the SDK register through a Nextcloud-server emulator with the real `pushgate` binary
/// (built-in sandbox), the server pushes to them as nextcloud/notifications does, and what the provider
/// emulators receive is what the devices expect: subject and signature unchanged, the right push type,
/// priority and topic, and the SDK verifies and decrypts it.
@Suite("Nextcloud, end to end")
struct NextcloudEndToEndTests {
    struct Phone {
        let key: NextcloudDeviceKey
        let registration: NextcloudPushRegistration
        let login: String

        func decode(_ subject: String, _ signature: String) throws -> NextcloudPushMessage {
            let account = try NextcloudPushAccount(identifier: self.login, registration: self.registration, deviceKey: self.key)
            return try NextcloudPushDecoder(accounts: [account]).decode(subject: subject, signature: signature).message
        }
    }

    static func deliveries(_ port: Int) async throws -> [JSONValue] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/sandbox/deliveries"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 24)
        guard case .array(let list) = try JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)) else { return [] }
        return list
    }

    /// A delivery's `apns-*` headers but `apns-id` (a new UUID per attempt) and `apns-expiration` (a time),
    /// which the test checks apart.
    static func apnsHeaders(_ delivery: JSONValue) -> [String: String] {
        guard case .object(let headers)? = delivery["headers"] else { return [:] }
        var result: [String: String] = [:]
        for (name, value) in headers where name.hasPrefix("apns-") && name != "apns-id" && name != "apns-expiration" {
            result[name] = value.stringValue
        }
        return result
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func devicesRegisterReceiveAndDecryptWhatTheirServerSends() async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", """
            http: {bind_addresses: ['127.0.0.1'], port: 0}
            log: {format: json}
            database: {url: 'sqlite:store.sqlite'}
            nextcloud:
              fcm_app: demo.fcm
              apns_app: demo.apns
              apns_voip_app: demo.apns
            """)
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let proxyPort = try #require(try await gateway.waitForListeners().first).port
        let proxy = try #require(URL(string: "http://localhost:\(proxyPort)/"))

        let serverPort = PortBox()
        let server = try await NextcloudServerEmulator(host: "localhost", users: ["ann", "cat", "del", "bob"])
        let router = Router()
        server.addRoutes(to: router)
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in serverPort.value = channel.localAddress?.port ?? 0 }, logger: TestLogging.quiet
        )
        try await RunningServices.with([application]) {
            while serverPort.value == 0 { try await Task.sleep(for: .milliseconds(20)) }
            let serverURL = try #require(URL(string: "http://127.0.0.1:\(serverPort.value)"))

            func phone(_ login: String, token: String, userAgent: String) async throws -> Phone {
                let key = try await OffPool.run { try NextcloudDeviceKey() }
                let registrar = NextcloudPushRegistrar(userAgent: userAgent)
                let credentials = NextcloudCredentials(server: serverURL, login: login, appPassword: server.user(login).appPassword)
                let registration = try await registrar.register(pushToken: token, deviceKey: key, proxyServer: proxy, credentials: credentials)
                return Phone(key: key, registration: registration, login: login)
            }
            let apnsToken = String(repeating: "a1", count: 32)
            let pushKitToken = String(repeating: "b2", count: 32)
            let android = try await phone("ann", token: "fcm-e2e-token:ann", userAgent: "Mozilla/5.0 (Android) Nextcloud-android/3.30.0")
            let talk = try await phone("cat", token: apnsToken + " " + pushKitToken, userAgent: "Mozilla/5.0 (iOS) Nextcloud-Talk v19.0.0 (Strict VoIP)")
            _ = try await phone("del", token: "unregistered-e2e", userAgent: "Mozilla/5.0 (Android) Nextcloud-android/3.30.0")

            // A chat message to Android, high priority: an FCM data-only message.
            let message = #"{"nid":525210,"app":"spreed","subject":"Ann wrote","type":"chat","id":"room1"}"#
            var answer = try await server.push(message, to: "ann", priority: "high", type: "alert")
            #expect(answer.status == 200)
            #expect(try Self.json(answer.body)["failed"] as? Int == 0)
            var fcm = try #require(try await Self.deliveries(proxyPort).last { $0["provider"] == "fcm" })
            #expect(fcm["token"] == "fcm-e2e-token:ann")
            var body = try JSONDecoder().decode(JSONValue.self, from: Data((fcm["body"]?.stringValue ?? "").utf8))
            // The whole message, as the reference's suggested shape (§8.2): data-only, `subject` and
            // `signature`, `android.priority` HIGH, the token; nothing else.
            #expect(body["notification"] == nil)
            #expect(body["android"] == ["priority": "HIGH"])
            if case .object(let members) = body { #expect(Set(members.keys) == ["data", "android", "token"]) }
            if case .object(let data)? = body["data"] { #expect(Set(data.keys) == ["subject", "signature"]) }
            guard case .notification(let notification) = try android.decode(body["data"]?["subject"]?.stringValue ?? "", body["data"]?["signature"]?.stringValue ?? "") else {
                Issue.record("the Android push did not decode as a notification")
                return
            }
            #expect(notification.nid == 525210)
            #expect(notification.app == "spreed")
            #expect(notification.subject == "Ann wrote")

            // A Talk call to iOS: PushKit, to the second token, on the .voip topic.
            let call = #"{"nid":7,"app":"spreed","subject":"Ann calls","type":"call","id":"room1"}"#
            answer = try await server.push(call, to: "cat", priority: "high", type: "voip")
            #expect(try Self.json(answer.body)["failed"] as? Int == 0)
            let voip = try #require(try await Self.deliveries(proxyPort).last { $0["provider"] == "apns" })
            #expect(voip["status"] == 200)
            #expect(voip["token"]?.stringValue == pushKitToken)
            // §8.3's voip row: every apns-* header the provider sees.
            #expect(Self.apnsHeaders(voip) == ["apns-push-type": "voip", "apns-topic": "im.pushgate.sandbox.voip", "apns-priority": "10"])
            // A call lives a minute at APNs.
            let expiration = Int(voip["headers"]?["apns-expiration"]?.stringValue ?? "") ?? 0
            let now = Int(Date().timeIntervalSince1970)
            #expect(expiration > now && expiration <= now + 61, "\(expiration) against \(now)")
            body = try JSONDecoder().decode(JSONValue.self, from: Data((voip["body"]?.stringValue ?? "").utf8))
            guard case .notification(let ringing) = try talk.decode(body["subject"]?.stringValue ?? "", body["signature"]?.stringValue ?? "") else {
                Issue.record("the VoIP push did not decode")
                return
            }
            #expect(ringing.subject == "Ann calls")

            // A delete from an older server (PKCS#1 v1.5 padding): a silent APNs push to the first token.
            answer = try await server.push(#"{"nid":7,"delete":true}"#, to: "cat", priority: "normal", type: "background", padding: .pkcs1)
            #expect(try Self.json(answer.body)["failed"] as? Int == 0)
            let silent = try #require(try await Self.deliveries(proxyPort).last { $0["provider"] == "apns" })
            #expect(silent["token"]?.stringValue == apnsToken)
            // §8.3's background row: headers, and a payload of `aps.content-available` and the two keys.
            #expect(Self.apnsHeaders(silent) == ["apns-push-type": "background", "apns-priority": "5", "apns-topic": "im.pushgate.sandbox"])
            #expect(silent["headers"]?["apns-expiration"] == nil)
            body = try JSONDecoder().decode(JSONValue.self, from: Data((silent["body"]?.stringValue ?? "").utf8))
            #expect(body["aps"] == ["content-available": 1])
            if case .object(let members) = body { #expect(Set(members.keys) == ["aps", "subject", "signature"]) }
            guard case .delete(let nid) = try talk.decode(body["subject"]?.stringValue ?? "", body["signature"]?.stringValue ?? "") else {
                Issue.record("the delete did not decode")
                return
            }
            #expect(nid == 7)

            // A normal alert to iOS: mutable-content, so the notification extension can decrypt it.
            answer = try await server.push(#"{"nid":8,"app":"files","subject":"Shared","type":"share","id":"8"}"#, to: "cat", priority: "normal", type: "alert")
            let alert = try #require(try await Self.deliveries(proxyPort).last { $0["provider"] == "apns" })
            // §8.3's alert row: headers for `normal`, and `aps.mutable-content` with `subject` and `signature`.
            #expect(Self.apnsHeaders(alert) == ["apns-push-type": "alert", "apns-priority": "5", "apns-topic": "im.pushgate.sandbox"])
            body = try JSONDecoder().decode(JSONValue.self, from: Data((alert["body"]?.stringValue ?? "").utf8))
            if case .object(let members) = body { #expect(Set(members.keys) == ["aps", "subject", "signature"]) }
            #expect(body["aps"]?["mutable-content"] == 1)
            #expect(body["aps"]?["sound"] == "default")
            #expect(alert["headers"]?["apns-expiration"] == nil)

            // FCM calls the token unregistered: the proxy drops the device and tells the server, which forgets it.
            let delIdentifier = try #require(server.registered.first { $0.login == "del" }?.deviceIdentifier)
            answer = try await server.push(message, to: "del", priority: "high", type: "alert")
            #expect(try Self.json(answer.body)["unknown"] as? [String] == [delIdentifier])
            #expect(!server.registered.contains { $0.login == "del" })

            // A forged signature is counted as failed and nothing reaches a provider.
            let before = try await Self.deliveries(proxyPort).count
            answer = try await server.push(message, to: "ann", priority: "high", type: "alert", forgeSignature: true)
            #expect(try Self.json(answer.body)["failed"] as? Int == 1)
            #expect(try await Self.deliveries(proxyPort).count == before)

            // Another user's key cannot take over Ann's identifier, even knowing how it is made.
            let bob = server.user("bob")
            let annRaw = Data(#"["ann@localhost",\#(server.user("ann").tokenID)]"#.utf8)
            let stolen = try bob.key.signature(for: SHA512.hash(data: annRaw), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()
            var takeover = HTTPClientRequest(url: "http://127.0.0.1:\(proxyPort)/devices")
            takeover.method = .POST
            takeover.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            takeover.body = .bytes(ByteBuffer(string: [
                ("pushToken", "fcm-e2e-token:bob"), ("deviceIdentifier", android.registration.deviceIdentifier),
                ("deviceIdentifierSignature", stolen), ("userPublicKey", bob.key.publicKey.pemRepresentation),
            ].map { "\($0.0)=\(NextcloudServerEmulator.urlencode($0.1))" }.joined(separator: "&")))
            #expect(try await HTTPClient.shared.execute(takeover, timeout: .seconds(10)).status == .conflict)
            answer = try await server.push(message, to: "ann", priority: "high", type: "alert")
            fcm = try #require(try await Self.deliveries(proxyPort).last { $0["provider"] == "fcm" })
            #expect(fcm["token"] == "fcm-e2e-token:ann")

            // A malformed form changes nothing.
            #expect(try await server.post(form: "notifications%5B0%5D=%7Bnot-json", to: proxy.absoluteString).body == #"{"failed":1,"unknown":[]}"#)
            #expect(try await server.post(form: "hello=world", to: proxy.absoluteString).status == 400)

            // Unregistering removes the device from both; a late push for it is answered unknown.
            let registrar = NextcloudPushRegistrar(userAgent: "Mozilla/5.0 (iOS) Nextcloud-Talk v19.0.0 (Strict VoIP)")
            let credentials = NextcloudCredentials(server: serverURL, login: "cat", appPassword: server.user("cat").appPassword)
            #expect(try await registrar.unregister(registration: talk.registration, credentials: credentials) == .deleted)
            let late = NextcloudServerEmulator.buildQuery([NextcloudServerEmulator.entry([
                ("deviceIdentifier", talk.registration.deviceIdentifier), ("pushTokenHash", pushTokenHash(apnsToken + " " + pushKitToken)),
                ("subject", "AAAA"), ("signature", "AAAA"), ("priority", "normal"), ("type", "alert"),
            ])])
            answer = try await server.post(form: late, to: proxy.absoluteString)
            #expect(try Self.json(answer.body)["unknown"] as? [String] == [talk.registration.deviceIdentifier])

            // Neither tokens nor keys appear in the gateway's logs.
            for secret in ["fcm-e2e-token:ann", apnsToken, pushKitToken, "unregistered-e2e", "BEGIN PUBLIC KEY"] {
                #expect(!gateway.errors.contains(secret), "\(secret) was logged")
            }
            gateway.signal(SIGTERM)
            #expect(await gateway.waitForExit(timeout: .seconds(60)) == 0)
        }
    }
}
