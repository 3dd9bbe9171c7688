import Crypto
import Foundation
import PushgateProviderSupport
@testable import PushgateWebPush
import PushgateTestSupport
import Testing

@Suite("Web Push aes128gcm encryption")
struct WebPushEncryptionTests {
    static let decryptScript = """
        import sys, http_ece
        from cryptography.hazmat.primitives.asymmetric import ec
        key = ec.derive_private_key(int(sys.argv[1], 16), ec.SECP256R1())
        body = bytes.fromhex(sys.argv[2])
        plain = http_ece.decrypt(body, private_key=key, auth_secret=bytes.fromhex(sys.argv[3]), version="aes128gcm")
        sys.stdout.write(plain.hex())
        """

    static let encryptScript = """
        import sys, http_ece
        from cryptography.hazmat.primitives.asymmetric import ec
        receiver = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes.fromhex(sys.argv[1]))
        sender = ec.generate_private_key(ec.SECP256R1())
        body = http_ece.encrypt(bytes.fromhex(sys.argv[3]), private_key=sender, dh=receiver,
                                auth_secret=bytes.fromhex(sys.argv[2]), version="aes128gcm")
        sys.stdout.write(body.hex())
        """

    static func subscription(for subscriber: TestFixtures.Subscriber) -> WebPushSubscription {
        WebPushSubscription(endpoint: URL(string: "https://push.example/sub")!, userAgentPublicKey: subscriber.key.publicKey, authSecret: subscriber.authSecret)
    }

    @Test(arguments: [0, 1, 120, WebPushEncryption.maximumPlaintextSize])
    func pythonHTTPECEDecryptsOurBodies(size: Int) async throws {
        let subscriber = TestFixtures.Subscriber()
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let body = try WebPushEncryption.encrypt(plaintext, for: Self.subscription(for: subscriber))
        let output = try await PythonReference.run(
            Self.decryptScript,
            arguments: [Array(subscriber.key.rawRepresentation).hex, body.hex, subscriber.authSecret.hex]
        )
        #expect(output == plaintext.hex)
    }

    @Test func weDecryptBodiesFromPythonHTTPECE() async throws {
        let subscriber = TestFixtures.Subscriber()
        let plaintext = Array(#"{"room_id":"!r:example.org","unread":2}"#.utf8)
        let output = try await PythonReference.run(
            Self.encryptScript,
            arguments: [Array(subscriber.key.publicKey.x963Representation).hex, subscriber.authSecret.hex, plaintext.hex]
        )
        let body = try #require([UInt8](hex: output))
        #expect(try WebPushEncryption.decrypt(body, userAgentKey: subscriber.key, authSecret: subscriber.authSecret) == plaintext)
    }

    /// RFC 8291 Appendix A: fixed keys, salt and auth secret give the published message byte for byte.
    @Test func rfc8291ExampleIsReproduced() throws {
        func bytes(_ text: String) throws -> [UInt8] { try #require(Base64URL.decode(text)) }
        let senderKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: try bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        let receiverKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: try bytes("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"))
        let auth = try bytes("BTBZMqHH6r4Tts7J_aSIgg")
        let body = try WebPushEncryption.encrypt(
            Array("When I grow up, I want to be a watermelon".utf8),
            userAgentPublicKey: receiverKey.publicKey,
            authKey: HMACSHA256(key: auth),
            salt: try bytes("DGv6ra1nlYgDCS1FRnbzlw"),
            senderKey: senderKey
        )
        #expect(Base64URL.encode(receiverKey.publicKey.x963Representation) == "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
        let published = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        #expect(Base64URL.encode(body) == published)
        #expect(try WebPushEncryption.decrypt(try bytes(published), userAgentKey: receiverKey, authSecret: auth) == Array("When I grow up, I want to be a watermelon".utf8))
    }

    /// With the same salt and sender key, http_ece produces the same bytes as we do.
    @Test func fixedInputsMatchPythonHTTPECEByteForByte() async throws {
        let subscriber = TestFixtures.Subscriber()
        let sender = P256.KeyAgreement.PrivateKey()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let plaintext = Array(#"{"event_id":"$e","unread":1}"#.utf8)
        let body = try WebPushEncryption.encrypt(
            plaintext, userAgentPublicKey: subscriber.key.publicKey, authKey: HMACSHA256(key: subscriber.authSecret), salt: salt, senderKey: sender
        )
        let script = """
            import sys, http_ece
            from cryptography.hazmat.primitives.asymmetric import ec
            sender = ec.derive_private_key(int(sys.argv[1], 16), ec.SECP256R1())
            body = http_ece.encrypt(bytes.fromhex(sys.argv[5]), salt=bytes.fromhex(sys.argv[2]), private_key=sender,
                                    dh=bytes.fromhex(sys.argv[3]), auth_secret=bytes.fromhex(sys.argv[4]), version="aes128gcm")
            sys.stdout.write(body.hex())
            """
        let output = try await PythonReference.run(
            script,
            arguments: [
                Array(sender.rawRepresentation).hex, salt.hex, Array(subscriber.key.publicKey.x963Representation).hex,
                subscriber.authSecret.hex, plaintext.hex,
            ]
        )
        #expect(output == body.hex)
    }

    @Test func headerCarriesSaltRecordSizeAndSenderKey() throws {
        let subscriber = TestFixtures.Subscriber()
        let sender = P256.KeyAgreement.PrivateKey()
        let salt: [UInt8] = Array(1...16)
        let body = try WebPushEncryption.encrypt(
            Array("hi".utf8), userAgentPublicKey: subscriber.key.publicKey, authKey: HMACSHA256(key: subscriber.authSecret), salt: salt, senderKey: sender
        )
        #expect(Array(body[0..<16]) == salt)
        #expect(Array(body[16..<20]) == [0, 0, 0x10, 0])
        #expect(body[20] == 65)
        #expect(Array(body[21..<86]) == Array(sender.publicKey.x963Representation))
        #expect(body.count == 86 + 2 + 1 + 16)
        #expect(try WebPushEncryption.decrypt(body, userAgentKey: subscriber.key, authSecret: subscriber.authSecret) == Array("hi".utf8))
    }

    @Test func freshSaltAndKeyForEveryMessage() throws {
        let subscription = Self.subscription(for: TestFixtures.Subscriber())
        let first = try WebPushEncryption.encrypt(Array("same".utf8), for: subscription)
        let second = try WebPushEncryption.encrypt(Array("same".utf8), for: subscription)
        #expect(first[0..<16] != second[0..<16])
        #expect(first[21..<86] != second[21..<86])
    }

    @Test func plaintextBeyondOneRecordIsRefused() {
        let subscription = Self.subscription(for: TestFixtures.Subscriber())
        let size = WebPushEncryption.maximumPlaintextSize + 1
        #expect(throws: WebPushEncryption.Failure.payloadTooLarge(size: size, limit: 3993)) {
            try WebPushEncryption.encrypt([UInt8](repeating: 0x61, count: size), for: subscription)
        }
    }

    @Test func tamperedBodiesDoNotDecrypt() throws {
        let subscriber = TestFixtures.Subscriber()
        var body = try WebPushEncryption.encrypt(Array("secret".utf8), for: Self.subscription(for: subscriber))
        body[body.count - 1] ^= 0x01
        #expect(throws: WebPushEncryption.Failure.authenticationFailed) {
            try WebPushEncryption.decrypt(body, userAgentKey: subscriber.key, authSecret: subscriber.authSecret)
        }
    }
}
