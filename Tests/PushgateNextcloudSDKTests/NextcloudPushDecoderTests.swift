import Crypto
import CryptoExtras
import Foundation
import PushgateNextcloudSDK
import PushgateTestSupport
import Testing

@Suite("Incoming pushes")
struct NextcloudPushDecoderTests {
    static let notificationPlaintext =
        #"{"nid":525210,"app":"admin_notification_talk","subject":"Testing push notifications","type":"admin_notifications","id":"614aeee4"}"#
    static let notification = NextcloudPushMessage.notification(
        .init(app: "admin_notification_talk", type: "admin_notifications", subject: "Testing push notifications", id: "614aeee4", nid: 525210)
    )

    /// What Python's `cryptography` made for the SDK's device key, as a Nextcloud server would.
    struct Reference: Decodable {
        var userPublicKey: String
        var otherUserPublicKey: String
        var oaepSubject: String
        var oaepSignature: String
        var pkcs1Subject: String
        var pkcs1Signature: String
        var otherSignatureOfOAEPSubject: String
        var garbageSubject: String
        var garbageSignature: String
    }

    static let script = """
        import base64, json, os, sys
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa
        device = serialization.load_pem_public_key(sys.argv[1].encode())
        user = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        def pem(key):
            return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        def b64(data):
            return base64.b64encode(data).decode()
        def sign(key, data):
            return b64(key.sign(data, padding.PKCS1v15(), hashes.SHA512()))
        oaep = device.encrypt(sys.argv[2].encode(), padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None))
        pkcs1 = device.encrypt(sys.argv[3].encode(), padding.PKCS1v15())
        garbage = os.urandom(256)
        print(json.dumps({
            "userPublicKey": pem(user), "otherUserPublicKey": pem(other),
            "oaepSubject": b64(oaep), "oaepSignature": sign(user, oaep),
            "pkcs1Subject": b64(pkcs1), "pkcs1Signature": sign(user, pkcs1),
            "otherSignatureOfOAEPSubject": sign(other, oaep),
            "garbageSubject": b64(garbage), "garbageSignature": sign(user, garbage),
        }))
        """

    @Test func verifiesDecryptsAndReadsWhatPythonMade() async throws {
        let (deviceKey, otherDeviceKey) = try await OffPool.run { (try NextcloudDeviceKey(), try NextcloudDeviceKey()) }
        let output = try await PythonReference.run(
            Self.script, arguments: [deviceKey.publicKeyPEM(), Self.notificationPlaintext, #"{"nid":1337,"delete":true}"#]
        )
        let reference = try JSONDecoder().decode(Reference.self, from: Data(output.utf8))
        #expect(reference.userPublicKey.utf8.count == 451)

        // Another account (its own user key and device key) comes first; the signature selects the right one.
        let other = try NextcloudPushAccount(identifier: "bob@other.example", userPublicKeyPEM: reference.otherUserPublicKey, deviceKey: otherDeviceKey)
        let alice = try NextcloudPushAccount(identifier: "alice@cloud.example", userPublicKeyPEM: reference.userPublicKey, deviceKey: deviceKey)
        let decoder = NextcloudPushDecoder(accounts: [other, alice])

        let oaep = try decoder.decode(subject: reference.oaepSubject, signature: reference.oaepSignature)
        #expect(oaep.account.identifier == "alice@cloud.example")
        #expect(oaep.message == Self.notification)

        let pkcs1 = try decoder.decode(subject: reference.pkcs1Subject, signature: reference.pkcs1Signature)
        #expect(pkcs1.account.identifier == "alice@cloud.example")
        #expect(pkcs1.message == .delete(nid: 1337))

        // The other user's signature selects the other account, whose device key cannot decrypt.
        #expect(throws: NextcloudPushError.decryptionFailed(account: "bob@other.example")) {
            try decoder.decode(subject: reference.oaepSubject, signature: reference.otherSignatureOfOAEPSubject)
        }

        // A wrong user key: nothing verifies.
        #expect(throws: NextcloudPushError.signatureNotVerified) {
            try NextcloudPushDecoder(accounts: [other]).decode(subject: reference.oaepSubject, signature: reference.oaepSignature)
        }
        #expect(throws: NextcloudPushError.signatureNotVerified) {
            try NextcloudPushDecoder(accounts: []).decode(subject: reference.oaepSubject, signature: reference.oaepSignature)
        }

        // One flipped bit in the signature, or in the ciphertext.
        for bit in [0, 7, 1000, 2047] {
            #expect(throws: NextcloudPushError.signatureNotVerified) {
                try decoder.decode(subject: reference.oaepSubject, signature: Self.flip(bit, in: reference.oaepSignature))
            }
            #expect(throws: NextcloudPushError.signatureNotVerified) {
                try decoder.decode(subject: Self.flip(bit, in: reference.oaepSubject), signature: reference.oaepSignature)
            }
        }

        // A validly signed subject that is not a ciphertext for this device.
        #expect(throws: NextcloudPushError.decryptionFailed(account: "alice@cloud.example")) {
            try decoder.decode(subject: reference.garbageSubject, signature: reference.garbageSignature)
        }

        // Text that is not base64.
        #expect(throws: NextcloudPushError.malformedSubject) { try decoder.decode(subject: "*Encrypted subject*", signature: reference.oaepSignature) }
        #expect(throws: NextcloudPushError.malformedSubject) { try decoder.decode(subject: "", signature: reference.oaepSignature) }
        #expect(throws: NextcloudPushError.malformedSignature) { try decoder.decode(subject: reference.oaepSubject, signature: "*Signature*") }

        // A key stored and read back decrypts the same pushes.
        let restored = try NextcloudPushAccount(
            identifier: "alice@cloud.example", userPublicKeyPEM: reference.userPublicKey,
            deviceKey: try NextcloudDeviceKey(derRepresentation: deviceKey.derRepresentation)
        )
        #expect(try NextcloudPushDecoder(accounts: [restored]).decode(subject: reference.oaepSubject, signature: reference.oaepSignature).message == Self.notification)
    }

    @Test func readsEveryPlaintextInBothPaddings() async throws {
        let (deviceKey, userKey) = try await OffPool.run { (try NextcloudDeviceKey(), try _RSA.Signing.PrivateKey(keySize: .bits2048)) }
        let account = try NextcloudPushAccount(identifier: "a", userPublicKeyPEM: userKey.publicKey.pemRepresentation, deviceKey: deviceKey)
        let decoder = NextcloudPushDecoder(accounts: [account])
        let devicePublicKey = try _RSA.Encryption.PublicKey(pemRepresentation: deviceKey.publicKeyPEM())
        for (plaintext, expected) in NextcloudPushMessageTests.wellFormed {
            for padding in [_RSA.Encryption.Padding.PKCS1_OAEP, ._WEAK_AND_INSECURE_PKCS_V1_5] {
                let ciphertext = try devicePublicKey.encrypt(Data(plaintext.utf8), padding: padding)
                let signature = try userKey.signature(for: SHA512.hash(data: ciphertext), padding: .insecurePKCS1v1_5)
                let push = try decoder.decode(subject: ciphertext.base64EncodedString(), signature: signature.rawRepresentation.base64EncodedString())
                #expect(push.message == expected)
            }
        }
        // Decrypted but not a Nextcloud message.
        let ciphertext = try devicePublicKey.encrypt(Data(#"{"hello":"world"}"#.utf8), padding: .PKCS1_OAEP)
        let signature = try userKey.signature(for: SHA512.hash(data: ciphertext), padding: .insecurePKCS1v1_5)
        let error = #expect(throws: NextcloudPushError.self) {
            try decoder.decode(subject: ciphertext.base64EncodedString(), signature: signature.rawRepresentation.base64EncodedString())
        }
        guard case .malformedPlaintext = error else {
            Issue.record("expected malformedPlaintext, got \(String(describing: error))")
            return
        }
    }

    @Test func refusesAUserKeyThatIsNotOne() async throws {
        let deviceKey = try await OffPool.run { try NextcloudDeviceKey() }
        #expect(throws: NextcloudKeyError.invalidPublicKey) {
            try NextcloudPushAccount(identifier: "a", userPublicKeyPEM: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", deviceKey: deviceKey)
        }
        // A private key is not a user public key either.
        #expect(throws: NextcloudKeyError.invalidPublicKey) {
            try NextcloudPushAccount(identifier: "a", userPublicKeyPEM: deviceKey.pemRepresentation, deviceKey: deviceKey)
        }
    }

    /// `text` (base64) with bit `bit` of its bytes inverted, base64 again.
    static func flip(_ bit: Int, in text: String) -> String {
        var bytes = Array(Data(base64Encoded: text) ?? Data())
        bytes[bit / 8] ^= UInt8(1 << (bit % 8))
        return Data(bytes).base64EncodedString()
    }
}
