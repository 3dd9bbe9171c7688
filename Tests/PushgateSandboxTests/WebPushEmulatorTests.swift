import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import NIOCore
import PushgateProviderSupport
@testable import PushgateSandbox
import PushgateTestSupport
import Testing

@Suite("Web Push emulator")
struct WebPushEmulatorTests {
    static let encryptScript = """
        import base64, sys, http_ece
        from cryptography.hazmat.primitives.asymmetric import ec
        pad = lambda s: s + "=" * (-len(s) % 4)
        receiver = base64.urlsafe_b64decode(pad(sys.argv[1]))
        auth = base64.urlsafe_b64decode(pad(sys.argv[2]))
        sender = ec.generate_private_key(ec.SECP256R1())
        body = http_ece.encrypt(sys.argv[3].encode(), private_key=sender, dh=receiver, auth_secret=auth, version="aes128gcm")
        print(base64.b64encode(body).decode())
        """

    static let vapidScript = """
        import sys
        from py_vapid import Vapid
        v = Vapid()
        v.generate_keys()
        print(v.sign({"aud": sys.argv[1], "sub": "mailto:ops@example.org"})["Authorization"])
        """

    @Test func decryptsWhatTheReferenceImplementationEncrypts() async throws {
        let subscription = WebPushSubscriptionIssuer().issue(id: "s1")
        let plaintext = #"{"room_id":"!r:x","unread":2,"body":"héllo ✓"}"#
        let encoded = try await PythonReference.run(Self.encryptScript, arguments: [
            Base64URL.encode(subscription.privateKey.publicKey.x963Representation), Base64URL.encode(subscription.authSecret), plaintext,
        ])
        let body = try #require(Data(base64Encoded: encoded))
        let decrypted = try WebPushDecryption.decrypt(Array(body), privateKey: subscription.privateKey, authSecret: subscription.authSecret)
        #expect(String(decoding: decrypted, as: UTF8.self) == plaintext)
        // Another subscription's keys do not open it.
        let other = WebPushSubscriptionIssuer().issue()
        #expect(throws: WebPushDecryption.Failure.self) {
            try WebPushDecryption.decrypt(Array(body), privateKey: other.privateKey, authSecret: other.authSecret)
        }
    }

    @Test func acceptsAReferenceVAPIDHeaderAndRefusesForgeries() async throws {
        let header = try await PythonReference.run(Self.vapidScript, arguments: ["http://127.0.0.1:8080"])
        #expect(try VAPIDVerifier.verify(authorization: header, origin: "http://127.0.0.1:8080", now: Date()) == "mailto:ops@example.org")
        #expect(throws: VAPIDVerifier.Failure.self) {
            try VAPIDVerifier.verify(authorization: header, origin: "http://127.0.0.1:9999", now: Date())
        }
        let tampered = header.replacingOccurrences(of: "t=ey", with: "t=eX")
        #expect(throws: VAPIDVerifier.Failure.self) {
            try VAPIDVerifier.verify(authorization: tampered, origin: "http://127.0.0.1:8080", now: Date())
        }
        #expect(throws: VAPIDVerifier.Failure.self) {
            try VAPIDVerifier.verify(authorization: nil, origin: "http://127.0.0.1:8080", now: Date())
        }
        // A header seen before is still checked for its audience and expiry on every request.
        #expect(try VAPIDVerifier.verify(authorization: header, origin: "http://127.0.0.1:8080", now: Date()) == "mailto:ops@example.org")
        #expect(throws: VAPIDVerifier.Failure(reason: "aud is not the push service origin")) {
            try VAPIDVerifier.verify(authorization: header, origin: "http://127.0.0.1:9999", now: Date())
        }
        #expect(throws: VAPIDVerifier.Failure(reason: "exp is past or more than 24 hours ahead")) {
            try VAPIDVerifier.verify(authorization: header, origin: "http://127.0.0.1:8080", now: Date().addingTimeInterval(2 * 86_400))
        }
        for _ in 0..<2 {
            #expect(throws: VAPIDVerifier.Failure(reason: "the vapid JWT signature does not verify with k")) {
                try VAPIDVerifier.verify(authorization: tampered, origin: "http://127.0.0.1:8080", now: Date())
            }
        }
    }

    @Test func theLogKeepsTheNewestDeliveriesInOrder() {
        let log = SandboxDeliveryLog(capacity: 3)
        func delivery(_ index: Int) -> SandboxDelivery {
            SandboxDelivery(provider: "apns", token: "t\(index)", status: 200, reason: nil, headers: [:], body: "b\(index)")
        }
        #expect(log.all.isEmpty)
        for index in 0..<2 { log.record(delivery(index)) }
        #expect(log.all.map(\.token) == ["t0", "t1"])
        for index in 2..<7 { log.record(delivery(index)) }
        #expect(log.all.map(\.token) == ["t4", "t5", "t6"])
        #expect(log.all.map(\.body) == ["b4", "b5", "b6"])
        log.clear()
        #expect(log.all.isEmpty)
        log.record(delivery(7))
        #expect(log.all.map(\.token) == ["t7"])
        let none = SandboxDeliveryLog(capacity: 0)
        none.record(delivery(0))
        #expect(none.all.isEmpty)
    }

    /// A VAPID header for the origin `http://127.0.0.1:1` and `{"ok":true}` encrypted for `subscription`,
    /// both made by the Python reference implementations.
    static func referencePush(to subscription: WebPushSubscriptionIssuer.Subscription) async throws -> (String, ByteBuffer) {
        let header = try await PythonReference.run(Self.vapidScript, arguments: ["http://127.0.0.1:1"])
        let encoded = try await PythonReference.run(Self.encryptScript, arguments: [
            Base64URL.encode(subscription.privateKey.publicKey.x963Representation), Base64URL.encode(subscription.authSecret), #"{"ok":true}"#,
        ])
        return (header, ByteBuffer(bytes: try #require(Data(base64Encoded: encoded))))
    }

    @Test func answersEachSpecialEndpointAndRecordsDeliveries() async throws {
        let log = SandboxDeliveryLog()
        let emulator = WebPushEmulator(log: log)
        let subscription = emulator.issuer.issue(id: "real")
        let router = Router()
        emulator.addRoutes(to: router) { "http://127.0.0.1:1" }
        let app = Application(router: router)
        let (header, body) = try await Self.referencePush(to: subscription)
        try await app.test(.router) { client in
            let headers: HTTPFields = [.authorization: header, .contentEncoding: "aes128gcm", HTTPField.Name("TTL")!: "60"]
            #expect(try await client.execute(uri: "/push/real", method: .post, headers: headers, body: body).status == .created)
            #expect(try await client.execute(uri: "/push/gone", method: .post, headers: headers, body: body).status == .gone)
            #expect(try await client.execute(uri: "/push/missing", method: .post, headers: headers, body: body).status == .notFound)
            let throttled = try await client.execute(uri: "/push/throttled", method: .post, headers: headers, body: body)
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.headers[.retryAfter] == "7")
            #expect(try await client.execute(uri: "/push/failing", method: .post, headers: headers, body: body).status == .internalServerError)
            var unsigned = headers
            unsigned[.authorization] = nil
            #expect(try await client.execute(uri: "/push/real", method: .post, headers: unsigned, body: body).status == .unauthorized)
            #expect(try await client.execute(uri: "/push/real", method: .post, headers: headers, body: ByteBuffer(repeating: 1, count: 5000)).status == .contentTooLarge)
        }
        let delivered = log.all.filter { $0.status == 201 }
        #expect(delivered.count == 1)
        #expect(delivered.first?.body == #"{"ok":true}"#)
        #expect(delivered.first?.headers["ttl"] == "60")
        #expect(log.all.count == 7)
    }

    /// Like a real push service the emulator cannot judge the ciphertext: a body encrypted for another
    /// subscription is accepted, and the log shows the browser failing to decrypt it.
    @Test func aBodyTheBrowserCannotDecryptIsAcceptedAndListedWithTheReason() async throws {
        let log = SandboxDeliveryLog()
        let emulator = WebPushEmulator(log: log)
        _ = emulator.issuer.issue(id: "real")
        let stranger = WebPushSubscriptionIssuer().issue(id: "elsewhere")
        let (header, body) = try await Self.referencePush(to: stranger)
        let headers = ["authorization": header, "content-encoding": "aes128gcm", "ttl": "60"]
        let answer = emulator.judge(id: "real", body: Array(buffer: body), header: { headers[$0] }, origin: "http://127.0.0.1:1")
        #expect(answer.status == 201)
        let listed = try #require(log.all.first)
        #expect(listed.status == 201)
        #expect(listed.body == "")
        #expect(listed.reason?.hasPrefix("the browser could not decrypt: ") == true)
    }

    /// Like Mozilla's push service, the emulator refuses an `Urgency` outside RFC 8030's four and a `Topic`
    /// over 32 characters or outside `^[0-9A-Za-z\-_]+=*$`; it records the `TTL`, `Urgency` and `Topic` sent.
    @Test func refusesInvalidUrgencyAndTopicAndRecordsTheHeaders() {
        let log = SandboxDeliveryLog()
        let emulator = WebPushEmulator(log: log)
        _ = emulator.issuer.issue(id: "real")
        func status(_ extra: [String: String]) -> Int {
            // No VAPID header: what passes the header checks is answered 401.
            let headers = ["content-encoding": "aes128gcm", "ttl": "60"].merging(extra) { _, new in new }
            return emulator.judge(id: "real", body: [1, 2, 3], header: { headers[$0] }, origin: "http://127.0.0.1:1").status
        }
        for urgency in ["very-low", "low", "normal", "high"] { #expect(status(["urgency": urgency]) == 401) }
        for urgency in ["urgent", "HIGH", ""] { #expect(status(["urgency": urgency]) == 400) }
        for topic in ["room-1", "RURl-mGrL3Gtdl-_0CCD3j0bD8MwkA==", String(repeating: "a", count: 32)] { #expect(status(["topic": topic]) == 401) }
        for topic in [String(repeating: "a", count: 33), "a=b", "==", "!room:x", ""] { #expect(status(["topic": topic]) == 400) }
        let recorded = log.all.first { $0.headers["topic"] == "RURl-mGrL3Gtdl-_0CCD3j0bD8MwkA==" }
        #expect(recorded?.headers["ttl"] == "60")
        #expect(log.all.first { $0.headers["urgency"] == "very-low" } != nil)
    }

    /// The same checks through the server the sandbox runs: NIO handlers, no Hummingbird router.
    @Test func theNIOServerAnswersLikeTheRoutes() async throws {
        let log = SandboxDeliveryLog()
        let emulator = WebPushEmulator(log: log)
        let subscription = emulator.issuer.issue(id: "real")
        let app = emulator.makeApplication(origin: "http://127.0.0.1:1", deliveries: { Array("[\(log.all.count)]".utf8) })
        let (header, body) = try await Self.referencePush(to: subscription)
        try await app.test(.live) { client in
            let headers: HTTPFields = [.authorization: header, .contentEncoding: "aes128gcm", HTTPField.Name("TTL")!: "60"]
            let created = try await client.execute(uri: "/push/real", method: .post, headers: headers, body: body)
            #expect(created.status == .created)
            #expect(created.headers[.location]?.hasPrefix("http://127.0.0.1:1/message/") == true)
            #expect(try await client.execute(uri: "/push/gone", method: .post, headers: headers, body: body).status == .gone)
            let missing = try await client.execute(uri: "/push/missing", method: .post, headers: headers, body: body)
            #expect(missing.status == .notFound)
            #expect(String(buffer: missing.body) == "no such subscription")
            let throttled = try await client.execute(uri: "/push/throttled", method: .post, headers: headers, body: body)
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.headers[.retryAfter] == "7")
            #expect(try await client.execute(uri: "/push/failing", method: .post, headers: headers, body: body).status == .internalServerError)
            var unsigned = headers
            unsigned[.authorization] = nil
            #expect(try await client.execute(uri: "/push/real", method: .post, headers: unsigned, body: body).status == .unauthorized)
            var untimed = headers
            untimed[HTTPField.Name("TTL")!] = nil
            #expect(try await client.execute(uri: "/push/real", method: .post, headers: untimed, body: body).status == .badRequest)
            #expect(try await client.execute(uri: "/push/real", method: .post, headers: headers, body: ByteBuffer(repeating: 1, count: 5000)).status == .contentTooLarge)
            #expect(try await client.execute(uri: "/push/real", method: .get).status == .methodNotAllowed)
            #expect(try await client.execute(uri: "/elsewhere", method: .post, headers: headers, body: body).status == .notFound)
            let deliveries = try await client.execute(uri: "/sandbox/deliveries", method: .get)
            #expect(deliveries.status == .ok)
            #expect(String(buffer: deliveries.body) == "[8]")
        }
        let delivered = log.all.filter { $0.status == 201 }
        #expect(delivered.count == 1)
        #expect(delivered.first?.body == #"{"ok":true}"#)
        #expect(delivered.first?.headers["ttl"] == "60")
        #expect(log.all.count == 8)
    }
}
