import AsyncHTTPClient
import _CryptoExtras
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import PushgateTestSupport
import Testing

/// The real binary while its database goes away: every request is answered within a few seconds in its
/// protocol's shape, nothing is lost, and the gateway recovers by itself when the database returns.
@Suite("Store outages", .serialized)
struct StoreOutageTests {
    /// How long an answer may take while the store is away: the configured store deadline (2 s) and
    /// room for a loaded machine, far below the 30 s a client would wait.
    static let answerBound: Duration = .seconds(10)

    /// A Nextcloud user key and a device registered under it.
    struct NextcloudDevice {
        let key: _RSA.Signing.PrivateKey
        let seed = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        let token: String

        /// A device under a user key of its own, generated with ``OffPool`` away from the pool.
        init(token: String) async throws {
            self.key = try await OffPool.run { try _RSA.Signing.PrivateKey(keySize: .bits2048) }
            self.token = token
        }

        var identifier: String { Data(SHA512.hash(data: self.seed)).base64EncodedString() }

        /// The `POST /devices` form, signed as a Nextcloud server signs it.
        var registrationForm: String {
            let signature = (try? self.key.signature(for: SHA512.hash(data: self.seed), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()) ?? ""
            let fields = [
                ("pushToken", self.token), ("deviceIdentifier", self.identifier), ("deviceIdentifierSignature", signature),
                ("userPublicKey", self.key.publicKey.pemRepresentation),
            ]
            return fields.map { "\($0.0)=\(Self.formEncoded($0.1))" }.joined(separator: "&")
        }

        /// A `POST /notifications` batch of one entry for this device, signed by the user key.
        var notificationForm: String {
            let subject = Data((0..<256).map { _ in UInt8.random(in: 0...255) })
            let signature = (try? self.key.signature(for: SHA512.hash(data: subject), padding: .insecurePKCS1v1_5).rawRepresentation.base64EncodedString()) ?? ""
            let tokenHash = SHA512.hash(data: Data(self.token.utf8)).map { String(format: "%02x", $0) }.joined()
            let entry = try! JSONSerialization.data(withJSONObject: [
                "deviceIdentifier": self.identifier, "pushTokenHash": tokenHash, "subject": subject.base64EncodedString(),
                "signature": signature, "priority": "high", "type": "alert",
            ])
            return "notifications%5B0%5D=" + Self.formEncoded(String(decoding: entry, as: UTF8.self))
        }

        static func formEncoded(_ text: String) -> String {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-_.")
            return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        }
    }

    struct Answer {
        let status: UInt
        let headers: [String: String]
        let body: String
        let took: Duration
    }

    static func send(_ method: HTTPMethod, _ url: String, body: String? = nil, contentType: String = "application/x-www-form-urlencoded") async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(string: body))
        }
        let started = ContinuousClock.now
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        return Answer(status: response.status.code, headers: headers, body: text, took: ContinuousClock.now - started)
    }

    static func matrixNotify(eventID: String) -> String {
        let pushkey = Data(repeating: 0xA1, count: 32).base64EncodedString()
        return """
            {"notification": {"event_id": "\(eventID)", "room_id": "!room:example.org", "type": "m.room.message",
             "sender": "@ann:example.org", "counts": {"unread": 1},
             "devices": [{"app_id": "demo.apns", "pushkey": "\(pushkey)"}]}}
            """
    }

    static func gatewayConfig(database: String) -> String {
        """
        http: {bind_addresses: ['127.0.0.1'], port: 0}
        log: {format: json, level: info}
        database: {url: '\(database)', timeout: 2}
        nextcloud: {fcm_app: demo.fcm, apns_app: demo.apns}
        """
    }

    /// Waits until `/health` answers 200, or the time is up.
    static func waitUntilHealthy(_ base: String, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? await Self.send(.GET, base + "/health").status) == 200 { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    @Test func whilePostgreSQLIsStoppedEveryRouteAnswersPromptlyAndTheGatewayRecovers() async throws {
        let postgres = try await ThrowawayPostgres()
        do {
            try await Self.outage(postgres)
        } catch {
            await postgres.remove()
            throw error
        }
        await postgres.remove()
    }

    static func outage(_ postgres: ThrowawayPostgres) async throws {
        let directory = try TemporaryDirectory()
        let config = try directory.write("pushgate.yaml", Self.gatewayConfig(database: postgres.url))
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let port = try #require(try await gateway.waitForListeners().first).port
        let base = "http://127.0.0.1:\(port)"

        let first = try await NextcloudDevice(token: "outage-first-token")
        let second = try await NextcloudDevice(token: "outage-second-token")
        #expect(try await Self.send(.POST, base + "/devices", body: first.registrationForm).status == 200)

        try await postgres.stop()

        let registration = try await Self.send(.POST, base + "/devices", body: second.registrationForm)
        #expect(registration.status == 503, "\(registration.body)")
        #expect(registration.headers["retry-after"] == "5")
        #expect((try? JSONSerialization.jsonObject(with: Data(registration.body.utf8)) as? [String: String])?["error"] != nil)
        #expect(registration.took < Self.answerBound)

        let batch = try await Self.send(.POST, base + "/notifications", body: first.notificationForm)
        #expect(batch.status == 503, "\(batch.body)")
        #expect(batch.took < Self.answerBound)

        let unregistration = try await Self.send(.DELETE, base + "/devices", body: first.registrationForm)
        #expect(unregistration.status == 503)
        #expect(unregistration.took < Self.answerBound)

        // Matrix needs the store only for its duplicate window: the notification is still delivered.
        let notify = try await Self.send(.POST, base + "/_matrix/push/v1/notify", body: Self.matrixNotify(eventID: "$outage1"), contentType: "application/json")
        #expect(notify.status == 200, "\(notify.body)")
        #expect(notify.body == #"{"rejected":[]}"#)
        #expect(notify.took < Self.answerBound)

        let health = try await Self.send(.GET, base + "/health")
        #expect(health.status == 503)
        #expect(health.body.contains("M_UNKNOWN"))
        #expect(health.took < Self.answerBound)

        try await postgres.start()
        #expect(await Self.waitUntilHealthy(base, within: .seconds(30)), "\(gateway.errors)")
        #expect(try await Self.send(.POST, base + "/devices", body: second.registrationForm).status == 200)
        let delivered = try await Self.send(.POST, base + "/notifications", body: first.notificationForm)
        #expect(delivered.status == 200)
        #expect(delivered.body.contains(#""failed":0"#), "\(delivered.body)")
        #expect(delivered.body.contains(#""unknown":[]"#), "\(delivered.body)")
        // Nothing secret reached the log while the store was away.
        #expect(!gateway.errors.contains("outage-first-token"))
        #expect(!gateway.errors.contains("outage-second-token"))
    }

    @Test(.enabled(if: getuid() == 0, "mounting a small file system needs root"))
    func aFullDiskIsReportedByHealthAndAnsweredInTheProtocolsShape() async throws {
        let directory = try TemporaryDirectory()
        let disk = directory.path("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mount = try await SpawnedCommand.run(["/bin/mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", disk])
        try #require(mount.status == 0, "\(mount.output)")
        defer { umount2(disk, Int32(MNT_DETACH)) }
        let config = try directory.write("pushgate.yaml", Self.gatewayConfig(database: "sqlite:\(disk)/store.sqlite"))
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        let port = try #require(try await gateway.waitForListeners().first).port
        let base = "http://127.0.0.1:\(port)"
        #expect(try await Self.send(.GET, base + "/health").status == 200)

        // Fill the file system.
        let filler = disk + "/filler"
        let fill = try await SpawnedCommand.run(["/bin/dd", "if=/dev/zero", "of=\(filler)", "bs=64k"])
        #expect(fill.status != 0)

        let device = try await NextcloudDevice(token: "disk-full-token")
        let registration = try await Self.send(.POST, base + "/devices", body: device.registrationForm)
        #expect(registration.status == 503, "\(registration.body)")
        #expect(registration.headers["retry-after"] == "5")
        #expect(registration.took < Self.answerBound)
        let health = try await Self.send(.GET, base + "/health")
        #expect(health.status == 503, "\(gateway.errors)")
        #expect(health.body.contains("cannot write"), "\(health.body)")

        try FileManager.default.removeItem(atPath: filler)
        #expect(await Self.waitUntilHealthy(base, within: .seconds(20)), "\(gateway.errors)")
        #expect(try await Self.send(.POST, base + "/devices", body: device.registrationForm).status == 200)
        #expect(!gateway.errors.contains("disk-full-token"))
        #expect(!gateway.errors.contains("\"error\":\"request failed\""))
    }
}
