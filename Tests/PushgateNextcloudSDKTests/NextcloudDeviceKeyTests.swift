import CryptoExtras
import Foundation
import PushgateNextcloudSDK
import PushgateTestSupport
import Testing

/// Keys are generated with ``OffPool``: an RSA key is a random prime search of up to seconds of CPU, which
/// on Swift's pool would stall the other tests' servers and timers meanwhile.
@Suite("Device key")
struct NextcloudDeviceKeyTests {
    @Test func publicKeyPEMIsExactlyWhatTheServerAccepts() async throws {
        let keys = try await OffPool.run { try (0..<6).map { _ in try NextcloudDeviceKey() } }
        for key in keys {
            let withNewline = key.publicKeyPEM()
            let withoutNewline = key.publicKeyPEM(trailingNewline: false)
            #expect(withNewline.utf8.count == 451)
            #expect(withoutNewline.utf8.count == 450)
            #expect(key.publicKeyPEM(trailingNewline: true) == withNewline)
            #expect(withNewline == withoutNewline + "\n")
            #expect(withNewline.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
            #expect(String(decoding: Array(withNewline.utf8)[425...], as: UTF8.self) == "\n-----END PUBLIC KEY-----\n")
            #expect(String(decoding: Array(withoutNewline.utf8)[425...], as: UTF8.self) == "\n-----END PUBLIC KEY-----")
            #expect(ServerKeyRules.acceptsDeviceKey(withNewline))
            #expect(ServerKeyRules.acceptsDeviceKey(withoutNewline))

            // 64-column base64 lines: six full ones and a last one of 8 characters.
            let lines = withoutNewline.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 9)
            #expect(lines[1...6].allSatisfy { $0.count == 64 })
            #expect(lines[7].count == 8)
            #expect(lines.last == "-----END PUBLIC KEY-----")

            // It is the SubjectPublicKeyInfo of the key itself.
            let parsed = try _RSA.Signing.PublicKey(pemRepresentation: withNewline)
            #expect(parsed.derRepresentation == key.publicKeyDER)
            #expect(parsed.keySizeInBits == 2048)
        }
    }

    @Test func theServerRuleRefusesNearMisses() async throws {
        let (pem, ownPEM) = try await OffPool.run {
            (try NextcloudDeviceKey().publicKeyPEM(), try _RSA.Signing.PrivateKey(keySize: .bits3072).publicKey.pemRepresentation)
        }
        #expect(!ServerKeyRules.acceptsDeviceKey(pem + "\n"))
        #expect(!ServerKeyRules.acceptsDeviceKey(pem.replacingOccurrences(of: "\n", with: "\r\n")))
        #expect(!ServerKeyRules.acceptsDeviceKey(String(pem.dropFirst())))
        #expect(!ServerKeyRules.acceptsDeviceKey(ownPEM))
    }

    @Test func privateKeyRoundTripsThroughPEMAndDER() async throws {
        let (key, other) = try await OffPool.run { (try NextcloudDeviceKey(), try NextcloudDeviceKey()) }
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let fromPEM = try NextcloudDeviceKey(pemRepresentation: key.pemRepresentation)
        let fromDER = try NextcloudDeviceKey(derRepresentation: key.derRepresentation)
        #expect(fromPEM.publicKeyPEM() == key.publicKeyPEM())
        #expect(fromDER.publicKeyPEM() == key.publicKeyPEM())
        #expect(fromPEM.derRepresentation == key.derRepresentation)
        #expect(other.publicKeyPEM() != key.publicKeyPEM())
    }

    @Test func pythonReadsTheKeysAndTheSDKReadsPythons() async throws {
        let key = try await OffPool.run { try NextcloudDeviceKey() }
        let script = """
            import json, sys
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import rsa
            spki = serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            public = serialization.load_pem_public_key(sys.argv[1].encode())
            private = serialization.load_pem_private_key(sys.argv[2].encode(), password=None)
            assert isinstance(public, rsa.RSAPublicKey) and public.key_size == 2048
            own = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            def pem(key, fmt):
                return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode()
            def der(key):
                return key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).hex()
            print(json.dumps({
                "public": public.public_bytes(*spki).decode(),
                "publicOfPrivate": private.public_key().public_bytes(*spki).decode(),
                "ownPKCS1": pem(own, serialization.PrivateFormat.TraditionalOpenSSL),
                "ownPKCS8DER": der(own),
                "ownPublic": own.public_key().public_bytes(*spki).decode(),
                "small": pem(rsa.generate_private_key(public_exponent=65537, key_size=1024), serialization.PrivateFormat.PKCS8),
                "large": pem(rsa.generate_private_key(public_exponent=65537, key_size=3072), serialization.PrivateFormat.PKCS8),
                "exponent3": pem(rsa.generate_private_key(public_exponent=3, key_size=2048), serialization.PrivateFormat.PKCS8),
            }))
            """
        let output = try await PythonReference.run(script, arguments: [key.publicKeyPEM(), key.pemRepresentation])
        let reference = try JSONDecoder().decode([String: String].self, from: Data(output.utf8))

        // Python's own SPKI PEM of the same key is byte for byte the SDK's 451-byte form.
        #expect(reference["public"] == key.publicKeyPEM())
        #expect(reference["publicOfPrivate"] == key.publicKeyPEM())

        // Keys made elsewhere import, PKCS#1 PEM and PKCS#8 DER alike.
        let pkcs1 = try NextcloudDeviceKey(pemRepresentation: try #require(reference["ownPKCS1"]))
        #expect(pkcs1.publicKeyPEM() == reference["ownPublic"])
        let pkcs8 = try NextcloudDeviceKey(derRepresentation: try #require(Data(hexadecimal: reference["ownPKCS8DER"])))
        #expect(pkcs8.publicKeyPEM() == reference["ownPublic"])

        // Keys whose public PEM the server would refuse are refused on import.
        #expect(throws: NextcloudKeyError.unsupportedKey(bits: 1024)) { try NextcloudDeviceKey(pemRepresentation: reference["small"] ?? "") }
        #expect(throws: NextcloudKeyError.unsupportedKey(bits: 3072)) { try NextcloudDeviceKey(pemRepresentation: reference["large"] ?? "") }
        // Exponent 3 encodes two bytes shorter, which base64 padding absorbs: the PEM still fits, so it imports.
        let exponent3 = try NextcloudDeviceKey(pemRepresentation: reference["exponent3"] ?? "")
        #expect(exponent3.publicKeyPEM().utf8.count == 451)
        #expect(exponent3.publicKeyPEM().contains("=\n-----END PUBLIC KEY-----"))
        #expect(ServerKeyRules.acceptsDeviceKey(exponent3.publicKeyPEM()))
    }

    @Test func garbageIsNotAKey() {
        #expect(throws: NextcloudKeyError.invalidPrivateKey) { try NextcloudDeviceKey(pemRepresentation: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
        #expect(throws: NextcloudKeyError.invalidPrivateKey) { try NextcloudDeviceKey(pemRepresentation: "") }
        #expect(throws: NextcloudKeyError.invalidPrivateKey) { try NextcloudDeviceKey(derRepresentation: Data([0x30, 0x03, 0x02, 0x01, 0x00])) }
    }

    @Test func descriptionsDoNotRevealTheKey() async throws {
        let key = try await OffPool.run { try NextcloudDeviceKey() }
        let secretLine = key.pemRepresentation.split(separator: "\n")[3]
        for text in [String(describing: key), String(reflecting: key), { var out = ""; dump(key, to: &out); return out }()] {
            #expect(!text.contains(secretLine))
            #expect(text.contains("NextcloudDeviceKey"))
        }
    }
}

extension Data {
    /// Bytes from lowercase or uppercase hexadecimal text; `nil` for anything else.
    init?(hexadecimal hex: String?) {
        guard let hex, hex.utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
