import Crypto
import Foundation
import PushgateProviderSupport
@testable import PushgateWebPush
import Testing

/// The RFC 8291 §3.4 key derivation written as plain HMACs.
@Suite("Web Push content key derivation")
struct WebPushContentKeysTests {
    static func bytes(_ text: String) throws -> [UInt8] { try #require(Base64URL.decode(text)) }

    /// RFC 8291 Appendix A: the published intermediate ECDH secret gives the published CEK and NONCE.
    @Test func rfc8291ExampleKeyAndNonce() throws {
        let senderKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Self.bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        let receiverKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Self.bytes("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"))
        let secret = try senderKey.sharedSecretFromKeyAgreement(with: receiverKey.publicKey)
        #expect(secret.withUnsafeBytes { Base64URL.encode(Array($0)) } == "kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs")

        let keys = try WebPushContentKeys(
            ecdhSecret: try Self.bytes("kyrL1jIIOHEzg3sM2ZWRHDRB62YACZhhSlknJ672kSs"),
            authKey: HMACSHA256(key: try Self.bytes("BTBZMqHH6r4Tts7J_aSIgg")),
            userAgentPublicKey: Array(receiverKey.publicKey.x963Representation),
            senderPublicKey: Array(senderKey.publicKey.x963Representation),
            salt: try Self.bytes("DGv6ra1nlYgDCS1FRnbzlw")
        )
        #expect(keys.contentEncryptionKey.withUnsafeBytes { Base64URL.encode(Array($0)) } == "oIhVW04MRdy2XN9CiKLxTg")
        #expect(Base64URL.encode(Array(keys.nonce)) == "4h_95klXJ5E_qnoN")
    }

    /// For random inputs the HMAC form gives exactly what swift-crypto's generic HKDF gives.
    @Test(arguments: 0..<16)
    func matchesGenericHKDF(round: Int) throws {
        func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }
        let secret = random(32)
        let authSecret = random(16)
        let userAgentPublic = Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        let senderPublic = Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        let salt = random(16)

        let keys = try WebPushContentKeys(
            ecdhSecret: secret, authKey: HMACSHA256(key: authSecret), userAgentPublicKey: userAgentPublic, senderPublicKey: senderPublic, salt: salt
        )

        let keyInfo = Array("WebPush: info\0".utf8) + userAgentPublic + senderPublic
        let ikm = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: authSecret, info: keyInfo, outputByteCount: 32
        )
        let expectedKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16
        )
        let expectedNonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce\0".utf8), outputByteCount: 12
        )
        #expect(keys.contentEncryptionKey == expectedKey)
        #expect(Array(keys.nonce) == expectedNonce.withUnsafeBytes { Array($0) })
    }
}
