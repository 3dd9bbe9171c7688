import Crypto
import Foundation
import PushgateProviderSupport
@testable import PushgateWebPush
import Synchronization
import PushgateTestSupport
import Testing

@Suite("VAPID signer")
struct VAPIDSignerTests {
    /// Verifies the JWT with `cryptography` against the `k=` key and prints its header and claims as JSON.
    static let verifyScript = """
        import sys, json, base64
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, utils
        def b64(text): return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        token, k = sys.argv[1], sys.argv[2]
        header, claims, signature = token.split(".")
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64(k))
        raw = b64(signature)
        assert len(raw) == 64, "signature is not r||s"
        der = utils.encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        key.verify(der, (header + "." + claims).encode(), ec.ECDSA(hashes.SHA256()))
        print(json.dumps({"header": json.loads(b64(header)), "claims": json.loads(b64(claims))}))
        """

    /// Writes a VAPID key as py_vapid does (PKCS#8) and as OpenSSL's traditional SEC1 form, with the raw
    /// public key, one per line.
    static let generateScript = """
        from py_vapid import Vapid
        from cryptography.hazmat.primitives import serialization
        vapid = Vapid()
        vapid.generate_keys()
        import base64
        pkcs8 = vapid.private_pem().decode()
        sec1 = vapid.private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()).decode()
        public = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        print(base64.b64encode(pkcs8.encode()).decode())
        print(base64.b64encode(sec1.encode()).decode())
        print(public.hex())
        """

    static func parts(of header: String) throws -> (token: String, key: String) {
        #expect(header.hasPrefix("vapid t="))
        let parameters = header.dropFirst("vapid ".count).components(separatedBy: ", ")
        #expect(parameters.count == 2)
        let token = try #require(parameters.first { $0.hasPrefix("t=") }).dropFirst(2)
        let key = try #require(parameters.first { $0.hasPrefix("k=") }).dropFirst(2)
        return (String(token), String(key))
    }

    @Test func jwtVerifiesWithPythonCryptographyAndCarriesTheClaims() async throws {
        let key = P256.Signing.PrivateKey()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let signer = VAPIDSigner(key: key, contact: "ops@example.org", now: { now })
        let header = try signer.authorization(for: URL(string: "https://push.example.net:8443/wpush/v2/abc?x=1")!)
        let (token, k) = try Self.parts(of: header)
        #expect(k == Base64URL.encode(key.publicKey.x963Representation))
        let output = try await PythonReference.run(Self.verifyScript, arguments: [token, k])
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: [String: Any]])
        #expect(decoded["header"]?["alg"] as? String == "ES256")
        #expect(decoded["header"]?["typ"] as? String == "JWT")
        #expect(decoded["claims"]?["aud"] as? String == "https://push.example.net:8443")
        #expect(decoded["claims"]?["sub"] as? String == "mailto:ops@example.org")
        #expect(decoded["claims"]?["exp"] as? Int == 1_800_000_000 + 12 * 3600)
        #expect(decoded["claims"]?.count == 3)
    }

    @Test func keysFromPyVAPIDLoadInBothPEMForms() async throws {
        let lines = try await PythonReference.run(Self.generateScript).split(separator: "\n").map(String.init)
        try #require(lines.count == 3)
        let pkcs8 = String(decoding: try #require(Data(base64Encoded: lines[0])), as: UTF8.self)
        let sec1 = String(decoding: try #require(Data(base64Encoded: lines[1])), as: UTF8.self)
        #expect(pkcs8.contains("BEGIN PRIVATE KEY"))
        #expect(sec1.contains("BEGIN EC PRIVATE KEY"))
        #expect(Array(try VAPIDSigner.loadKey(pem: pkcs8).publicKey.x963Representation).hex == lines[2])
        #expect(Array(try VAPIDSigner.loadKey(pem: sec1).publicKey.x963Representation).hex == lines[2])
    }

    @Test func contactsBecomeMailtoUnlessAlreadyAURI() {
        #expect(VAPIDSigner.subject(forContact: "ops@example.org") == "mailto:ops@example.org")
        #expect(VAPIDSigner.subject(forContact: "mailto:ops@example.org") == "mailto:ops@example.org")
        #expect(VAPIDSigner.subject(forContact: "https://example.org/contact") == "https://example.org/contact")
    }

    @Test func originsDropPathsAndDefaultPorts() {
        #expect(PushEndpoint.origin(of: URL(string: "https://Push.Example.net/a/b")!) == "https://push.example.net")
        #expect(PushEndpoint.origin(of: URL(string: "https://push.example.net:443/a")!) == "https://push.example.net")
        #expect(PushEndpoint.origin(of: URL(string: "http://127.0.0.1:8080/sub/ok")!) == "http://127.0.0.1:8080")
    }

    /// Origins come from subscriptions, which any pusher chooses: the cache of headers stays bounded.
    @Test func theHeaderCacheIsBounded() throws {
        let signer = VAPIDSigner(key: P256.Signing.PrivateKey(), contact: "ops@example.org", now: { Date(timeIntervalSince1970: 1_800_000_000) })
        for index in 0..<(VAPIDSigner.maximumCachedOrigins * 2 + 10) {
            _ = try signer.authorization(for: URL(string: "https://push\(index).example/x")!)
            #expect(signer.cachedOriginCount <= VAPIDSigner.maximumCachedOrigins)
        }
        let again = try signer.authorization(for: URL(string: "https://again.example/x")!)
        #expect(try signer.authorization(for: URL(string: "https://again.example/y")!) == again)
    }

    @Test func headersAreReusedPerOriginUntilAnHourBeforeExpiry() async throws {
        final class Clock: Sendable {
            let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        }
        let clock = Clock()
        let signer = VAPIDSigner(key: P256.Signing.PrivateKey(), contact: "ops@example.org", now: { clock.time.withLock { $0 } })
        let first = try signer.authorization(for: URL(string: "https://a.example/one")!)
        #expect(try signer.authorization(for: URL(string: "https://a.example/two")!) == first)
        let other = try signer.authorization(for: URL(string: "https://b.example/one")!)
        #expect(other != first)
        clock.time.withLock { $0 += 10 * 3600 }
        #expect(try signer.authorization(for: URL(string: "https://a.example/one")!) == first)
        clock.time.withLock { $0 += 3600 + 1 }
        let renewed = try signer.authorization(for: URL(string: "https://a.example/one")!)
        #expect(renewed != first)
        let claims = try #require(Base64URL.decode(try Self.parts(of: renewed).token.split(separator: ".")[1].description))
        let exp = try #require(try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any])["exp"] as? Int
        #expect(exp == 1_800_000_000 + 11 * 3600 + 1 + 12 * 3600)
    }
}
