import Foundation
import PushgateNextcloud
import PushgateTestSupport
import Testing

@Suite("Nextcloud device signatures")
struct PrehashedRSASignatureTests {
    /// Signs like the Nextcloud server: RSA 2048, PKCS#1 v1.5, SHA-512 over a digest it already has
    /// (the deviceIdentifier), with Python's cryptography as the reference.
    static let signScript = """
        import base64, hashlib, json
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa, utils
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        digest = hashlib.sha512(b"user@cloud.example.org#device-public-key").digest()
        signature = key.sign(digest, padding.PKCS1v15(), utils.Prehashed(hashes.SHA512()))
        pem = lambda k: k.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        print(json.dumps({"digest": base64.b64encode(digest).decode(), "signature": base64.b64encode(signature).decode(),
                          "key": pem(key), "other": pem(other)}))
        """

    @Test func acceptsWhatTheReferenceSignsAndRefusesEverythingElse() async throws {
        let output = try await PythonReference.run(Self.signScript)
        let fields = try JSONDecoder().decode([String: String].self, from: Data(output.utf8))
        let digestText = try #require(fields["digest"])
        let signatureText = try #require(fields["signature"])
        let digest = Array(try #require(Data(base64Encoded: digestText)))
        let signature = Array(try #require(Data(base64Encoded: signatureText)))
        let key = try #require(fields["key"])
        let other = try #require(fields["other"])

        #expect(PrehashedRSASignature.isValid(signature: signature, digest: digest, publicKeyPEM: key))
        // Another key, another digest, a flipped bit, a short signature, a short digest, garbage keys.
        #expect(!PrehashedRSASignature.isValid(signature: signature, digest: digest, publicKeyPEM: other))
        var otherDigest = digest
        otherDigest[0] ^= 1
        #expect(!PrehashedRSASignature.isValid(signature: signature, digest: otherDigest, publicKeyPEM: key))
        var flipped = signature
        flipped[100] ^= 0x10
        #expect(!PrehashedRSASignature.isValid(signature: flipped, digest: digest, publicKeyPEM: key))
        #expect(!PrehashedRSASignature.isValid(signature: Array(signature.dropFirst()), digest: digest, publicKeyPEM: key))
        #expect(!PrehashedRSASignature.isValid(signature: signature, digest: Array(digest.prefix(32)), publicKeyPEM: key))
        #expect(!PrehashedRSASignature.isValid(signature: signature, digest: digest, publicKeyPEM: "not a key"))
        #expect(!PrehashedRSASignature.isValid(signature: [UInt8](repeating: 0xff, count: 256), digest: digest, publicKeyPEM: key))
    }
}
