import Crypto
import Foundation
import PushgateAPNs
import PushgateConfig
import PushgateCore
import PushgateSandbox
import Testing

@Suite("APNs configuration")
struct APNsConfigurationTests {
    static func tokenKeys(_ directory: TemporaryDirectory) throws -> [String: String] {
        [
            "keyfile": try directory.write("AuthKey.p8", P256.Signing.PrivateKey().pemRepresentation),
            "key_id": "ABC123DEFG",
            "team_id": "TEAM123456",
            "topic": "im.example.ios",
        ]
    }

    @Test func tokenAuthenticationWithDefaults() throws {
        let directory = try TemporaryDirectory()
        let configuration = try APNsConfiguration(settings: appSettings(id: "im.example.ios", try Self.tokenKeys(directory)))
        #expect(configuration.appID == "im.example.ios")
        #expect(configuration.topic == "im.example.ios")
        #expect(configuration.server == .production)
        #expect(configuration.baseURL.absoluteString == "https://api.push.apple.com")
        #expect(configuration.pushType == nil)
        #expect(configuration.convertDeviceTokenToHex)
        #expect(configuration.sendBadgeCounts)
        #expect(configuration.inflightRequestLimit == 512)
        #expect(configuration.unknownKeys.isEmpty)
        guard case .token(_, let keyID, let teamID) = configuration.authentication else {
            Issue.record("expected token authentication")
            return
        }
        #expect(keyID == "ABC123DEFG" && teamID == "TEAM123456")
        #expect(configuration.authentication.description == "token ABC123DEFG")
        #expect(configuration.description == "im.example.ios: topic im.example.ios, token ABC123DEFG, https://api.push.apple.com")
        #expect(!String(reflecting: configuration).contains("PRIVATE KEY"))
    }

    @Test(arguments: ["key_id", "team_id", "topic", "keyfile"])
    func missingTokenKeyIsNamed(_ key: String) throws {
        let directory = try TemporaryDirectory()
        var keys = try Self.tokenKeys(directory)
        keys[key] = nil
        #expect(throws: ConfigurationError.self) { try APNsConfiguration(settings: appSettings(id: "im.example.ios", keys)) }
        do {
            _ = try APNsConfiguration(settings: appSettings(id: "im.example.ios", keys))
        } catch let error as ConfigurationError {
            #expect(error.key == "apps.im.example.ios.\(key)")
        }
    }

    @Test(arguments: [
        ("production", "https://api.push.apple.com"), ("prod", "https://api.push.apple.com"), ("", "https://api.push.apple.com"),
        ("sandbox", "https://api.sandbox.push.apple.com"),
    ])
    func platformSelectsTheHost(_ platform: String, _ url: String) throws {
        let directory = try TemporaryDirectory()
        var keys = try Self.tokenKeys(directory)
        keys["platform"] = platform
        #expect(try APNsConfiguration(settings: appSettings(keys)).baseURL.absoluteString == url)
    }

    @Test func invalidPlatformPushTypeAndBaseURLAreErrors() throws {
        let directory = try TemporaryDirectory()
        for (key, value) in [("platform", "staging"), ("push_type", "loud"), ("base_url", "http://127.0.0.1:80"), ("inflight_request_limit", "0")] {
            var keys = try Self.tokenKeys(directory)
            keys[key] = value
            do {
                _ = try APNsConfiguration(settings: appSettings(id: "a", keys))
                Issue.record("\(key)=\(value) accepted")
            } catch let error as ConfigurationError {
                #expect(error.key == "apps.a.\(key)")
            }
        }
    }

    @Test func extensionsAndUnknownKeys() throws {
        let directory = try TemporaryDirectory()
        let authority = try SandboxCertificateAuthority()
        var keys = try Self.tokenKeys(directory)
        keys["base_url"] = "https://127.0.0.1:8443/"
        keys["ca_file"] = try directory.write("ca.pem", authority.caCertificatePEM)
        keys["push_type"] = "mdm"
        keys["inflight_request_limit"] = "8"
        keys["colour"] = "blue"
        let configuration = try APNsConfiguration(settings: appSettings(id: "a", keys))
        #expect(configuration.baseURL.absoluteString == "https://127.0.0.1:8443")
        #expect(configuration.additionalTrustRoots.count == 1)
        #expect(configuration.pushType == .mdm)
        #expect(configuration.inflightRequestLimit == 8)
        #expect(configuration.unknownKeys == ["apps.a.colour"])
    }

    @Test func theSandboxCAIsNotWarnedAbout() throws {
        // A gateway started against `pushgate sandbox` trusts its CA: the CA's end lies beyond every
        // warning step, so the gateway's log starts without a warning.
        let directory = try TemporaryDirectory()
        let authority = try SandboxCertificateAuthority()
        var keys = try Self.tokenKeys(directory)
        keys["ca_file"] = try directory.write("ca.pem", authority.caCertificatePEM)
        let credentials = try APNsConfiguration(settings: appSettings(id: "a", keys)).credentials()
        let dated = credentials.compactMap(\.notAfter)
        #expect(dated.count == 1, "\(credentials)")
        for notAfter in dated {
            #expect(CredentialExpiry(notAfter: notAfter, now: Date()) == .valid, "\(notAfter)")
        }
    }

    @Test func keyfileThatIsNotAKeyIsAnError() throws {
        let directory = try TemporaryDirectory()
        var keys = try Self.tokenKeys(directory)
        keys["keyfile"] = try directory.write("nonsense.p8", "hello")
        #expect(throws: ConfigurationError(key: "apps.a.keyfile", "is not a PEM P-256 private key (.p8): \(keys["keyfile"]!)")) {
            try APNsConfiguration(settings: appSettings(id: "a", keys))
        }
    }

    @Test func certfileWinsAndNeedsATopicWithoutUID() throws {
        let directory = try TemporaryDirectory()
        let authority = try SandboxCertificateAuthority()
        let certfile = try directory.write("push.pem", authority.serverCertificatePEM + "\n" + authority.serverPrivateKeyPEM + "\n")
        var keys = try Self.tokenKeys(directory)
        keys["certfile"] = certfile
        let configuration = try APNsConfiguration(settings: appSettings(id: "a", keys))
        guard case .certificate(let file) = configuration.authentication else {
            Issue.record("certfile should win over keyfile")
            return
        }
        #expect(file == certfile)
        // The sandbox certificate has no UID in its subject, so the topic must be given.
        keys["topic"] = nil
        #expect(throws: ConfigurationError.self) { try APNsConfiguration(settings: appSettings(id: "a", keys)) }
        // A certfile without a key is refused.
        keys["topic"] = "im.example.ios"
        keys["certfile"] = try directory.write("cert-only.pem", authority.serverCertificatePEM)
        #expect(throws: ConfigurationError.self) { try APNsConfiguration(settings: appSettings(id: "a", keys)) }
        // A rotated file with the new certificate and the old key is refused by check-config already,
        // naming the file; before, it passed and the back end failed to build at start or at a reload.
        let other = try SandboxCertificateAuthority()
        keys["certfile"] = try directory.write("mismatched.pem", authority.serverCertificatePEM + "\n" + other.serverPrivateKeyPEM + "\n")
        #expect(throws: ConfigurationError(key: "apps.a.certfile", "holds a private key that does not belong to its certificate: \(keys["certfile"]!)")) {
            try APNsConfiguration(settings: appSettings(id: "a", keys))
        }
    }
}
