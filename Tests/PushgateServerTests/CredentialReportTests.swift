import Foundation
import PushgateSandbox
import Testing

/// What the gateway reads from its credentials at start, seen from outside: `check-config`'s lines,
/// the warning in the log and the expiry gauge on `/metrics`, for an APNs client certificate that
/// expires in 5 days and a `.p8` key, both made by Python's `cryptography` in the test.
@Suite("credential report")
struct CredentialReportTests {
    struct Credentials: Decodable {
        let certificateNotAfter: Int
        let certificateFingerprint: String
        let keyFingerprint: String
        let keyBody: String

        enum CodingKeys: String, CodingKey {
            case certificateNotAfter = "certificate_not_after"
            case certificateFingerprint = "certificate_fingerprint"
            case keyFingerprint = "key_fingerprint"
            case keyBody = "key_body"
        }
    }

    /// Writes `cert.pem` (a certificate with its key, valid for `days` more days, its subject's UID the
    /// topic, as Apple issues them) and `key.p8` into `directory`, and returns what the reference says
    /// about them: SHA-256 fingerprints of the certificate's DER and of the key's public key (DER), and
    /// the certificate's notAfter.
    static func makeCredentials(in directory: TemporaryDirectory, days: Int) async throws -> Credentials {
        let script = """
            import datetime, hashlib, json, sys
            from cryptography import x509
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.x509.oid import NameOID
            directory, days = sys.argv[1], int(sys.argv[2])
            now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
            key = ec.generate_private_key(ec.SECP256R1())
            name = x509.Name([x509.NameAttribute(NameOID.USER_ID, "im.example.cert"),
                              x509.NameAttribute(NameOID.COMMON_NAME, "Apple Push Services: im.example.cert")])
            certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                           .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=300))
                           .not_valid_after(now + datetime.timedelta(days=days)).sign(key, hashes.SHA256()))
            pkcs8 = serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            with open(f"{directory}/cert.pem", "wb") as f:
                f.write(certificate.public_bytes(serialization.Encoding.PEM) + key.private_bytes(*pkcs8))
            p8 = ec.generate_private_key(ec.SECP256R1())
            p8_pem = p8.private_bytes(*pkcs8)
            with open(f"{directory}/key.p8", "wb") as f:
                f.write(p8_pem)
            spki = p8.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
            print(json.dumps({
                "certificate_not_after": int(certificate.not_valid_after_utc.timestamp()),
                "certificate_fingerprint": "sha256:" + hashlib.sha256(certificate.public_bytes(serialization.Encoding.DER)).hexdigest()[:16],
                "key_fingerprint": "sha256:" + hashlib.sha256(spki).hexdigest()[:16],
                "key_body": p8_pem.decode().splitlines()[1],
            }))
            """
        let output = try await PythonReference.run(script, arguments: [directory.url.path, "\(days)"])
        return try JSONDecoder().decode(Credentials.self, from: Data(output.utf8))
    }

    static func config(_ directory: TemporaryDirectory) -> String {
        """
        http: {bind_addresses: ['127.0.0.1'], port: 0}
        log: {format: json, level: info}
        database: {url: 'sqlite:store.sqlite'}
        apps:
          im.example.cert: {type: apns, certfile: '\(directory.path("cert.pem"))', base_url: 'https://127.0.0.1:9'}
          im.example.key:
            type: apns
            keyfile: '\(directory.path("key.p8"))'
            key_id: KEY1234567
            team_id: TEAM123456
            topic: im.example.key
            base_url: 'https://127.0.0.1:9'
        """
    }

    @Test func checkConfigNamesEachCredentialAndWhenTheCertificateEnds() async throws {
        let directory = try TemporaryDirectory()
        let credentials = try await Self.makeCredentials(in: directory, days: 5)
        let config = try directory.write("pushgate.yaml", Self.config(directory))
        let result = try await GatewayProcess.run(["check-config", "--config", config], directory: directory.url.path)
        #expect(result.status == 0, "\(result.errors)")
        let notAfter = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(credentials.certificateNotAfter)))
        let lines = result.output.split(separator: "\n").map(String.init)
        let certificate = try #require(lines.first { $0.contains("apns_certificate:") }, "\(result.output)")
        #expect(certificate.contains("UID=im.example.cert"), "\(certificate)")
        #expect(certificate.contains(credentials.certificateFingerprint), "\(certificate)")
        #expect(certificate.contains("valid until \(notAfter)"), "\(certificate)")
        #expect(certificate.contains("expires within 7 days"), "\(certificate)")
        #expect(
            lines.contains { $0.hasSuffix("apns_key: key id KEY1234567, team TEAM123456, key \(credentials.keyFingerprint)") },
            "\(result.output)"
        )
        #expect(!(result.output + result.errors).contains(credentials.keyBody))
    }

    @Test func serveWarnsOfTheCertificateAndPublishesItsEnd() async throws {
        let directory = try TemporaryDirectory()
        let credentials = try await Self.makeCredentials(in: directory, days: 5)
        let config = try directory.write("pushgate.yaml", Self.config(directory))
        let gateway = try GatewayProcess(arguments: ["serve", "--config", config], directory: directory.url.path)
        defer { gateway.kill() }
        let listener = try #require(try await gateway.waitForListeners().first)

        let deadline = ContinuousClock.now + .seconds(30)
        func warning() -> [String: String]? {
            gateway.logEvents.first { $0["msg"]?.hasPrefix("credential expires within 7 days") == true }
        }
        while ContinuousClock.now < deadline, warning() == nil { try await Task.sleep(for: .milliseconds(50)) }
        let logged = try #require(warning(), "\(gateway.errors)")
        #expect(logged["level"] == "warning", "\(logged)")
        #expect(logged["app"] == "im.example.cert")
        #expect(logged["kind"] == "apns_certificate")
        // The key carries no date: named in the log, never warned about.
        #expect(gateway.logEvents.contains { $0["msg"] == "credential" && $0["app"] == "im.example.key" && $0["identity"]?.contains(credentials.keyFingerprint) == true })
        #expect(!gateway.logEvents.contains { $0["msg"]?.hasPrefix("credential expires") == true && $0["app"] == "im.example.key" })

        let metrics = try await ServeProcessTests.get("http://127.0.0.1:\(listener.port)/metrics").body
        let series = #"pushgate_credential_expiry_timestamp_seconds{app="im.example.cert",kind="apns_certificate"} "#
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix(series) }, "\(metrics)")
        let value = try #require(Double(line.dropFirst(series.count)))
        #expect(value == Double(credentials.certificateNotAfter))
        #expect(!metrics.contains(#"pushgate_credential_expiry_timestamp_seconds{app="im.example.key""#))
        #expect(!gateway.errors.contains(credentials.keyBody))

        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(30)) == 0, "\(gateway.errors)")
    }

    @Test func checkConfigNamesEveryProvidersKeyByItsFingerprint() async throws {
        let directory = try TemporaryDirectory()
        let sandbox = directory.url.appendingPathComponent("sandbox")
        _ = try SandboxEnvironment.prepare(directory: sandbox, logger: TestLogging.quiet)
        let result = try await GatewayProcess.run(["check-config", "--config", sandbox.appendingPathComponent("pushgate-sandbox.yaml").path], directory: directory.url.path)
        #expect(result.status == 0, "\(result.errors)")
        // The reference: SHA-256 of each public key's DER (SubjectPublicKeyInfo), of the HMS secret's bytes.
        let script = """
            import hashlib, json, sys
            from cryptography.hazmat.primitives import serialization
            directory = sys.argv[1]
            def spki(pem):
                key = serialization.load_pem_private_key(pem.encode(), password=None)
                der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
                return "sha256:" + hashlib.sha256(der).hexdigest()[:16]
            account = json.load(open(f"{directory}/fcm-service-account.json"))
            print(spki(account["private_key"]))
            print(account["private_key_id"])
            print(spki(open(f"{directory}/vapid.pem").read()))
            print(spki(open(f"{directory}/apns-key.p8").read()))
            print("sha256:" + hashlib.sha256(open(f"{directory}/hms-app-secret").read().strip().encode()).hexdigest()[:16])
            """
        let reference = try await PythonReference.run(script, arguments: [sandbox.path]).split(separator: "\n").map(String.init)
        try #require(reference.count == 5)
        let lines = result.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let fcm = try #require(lines.first { $0.hasPrefix("fcm_service_account:") }, "\(result.output)")
        #expect(fcm.hasSuffix("key id \(reference[1]), key \(reference[0])"), "\(fcm)")
        #expect(fcm.contains("project "), "\(fcm)")
        #expect(lines.contains { $0.hasPrefix("vapid_key: public key \(reference[2]),") }, "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("apns_key: key id ") && $0.hasSuffix("key \(reference[3])") }, "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("hms_app_secret: app id ") && $0.hasSuffix("secret \(reference[4])") }, "\(result.output)")
        // The sandbox's CA: a certificate, with its date.
        #expect(lines.contains { $0.hasPrefix("ca_file: 1 certificate, the first to expire sha256:") && $0.contains(", valid until ") }, "\(result.output)")
    }
}
