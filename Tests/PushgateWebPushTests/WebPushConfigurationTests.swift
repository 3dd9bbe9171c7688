import Crypto
import Foundation
import PushgateConfig
import PushgateWebPush
import Testing

@Suite("Web Push configuration")
struct WebPushConfigurationTests {
    @Test func missingPrivateKeyNamesTheKey() throws {
        let settings = try TestFixtures.appSettings(id: "web.app", ["vapid_contact_email: ops@example.org"])
        #expect(throws: ConfigurationError.self) { try WebPushConfiguration(settings: settings) }
        do {
            _ = try WebPushConfiguration(settings: settings)
        } catch let error as ConfigurationError {
            #expect(error.key == "apps.web.app.vapid_private_key")
        }
    }

    @Test func unreadableOrInvalidKeyFilesNameTheKey() throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let garbage = try directory.write("not a key", named: "bad.pem")
        for path in [directory.url.appendingPathComponent("absent.pem").path, garbage] {
            let settings = try TestFixtures.appSettings(id: "web", ["vapid_private_key: \(path)", "vapid_contact_email: ops@example.org"])
            let error = try #require(throws: ConfigurationError.self) { try WebPushConfiguration(settings: settings) }
            #expect(error.key == "apps.web.vapid_private_key")
        }
    }

    @Test func missingContactNamesTheKey() throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let path = try directory.write(P256.Signing.PrivateKey().pemRepresentation, named: "vapid.pem")
        let settings = try TestFixtures.appSettings(id: "web", ["vapid_private_key: \(path)"])
        let error = try #require(throws: ConfigurationError.self) { try WebPushConfiguration(settings: settings) }
        #expect(error.key == "apps.web.vapid_contact_email")
    }

    /// Push services refuse a VAPID token whose `sub` is neither a mailto: address nor an https: URL: such a
    /// contact is refused when the file is read, not by every delivery.
    @Test(arguments: [
        ("ops@example.org", true), ("mailto:ops@example.org", true), ("MAILTO:ops@example.org", true), ("https://example.org/contact", true),
        ("ops", false), ("ops@", false), ("@example.org", false), ("ops@example.", false), ("mailto:", false), ("ops @example.org", false),
        ("http://example.org", false), ("https://", false), ("https:example.org", false),
    ])
    func theContactMustBeAnAddressOrAnHTTPSURL(contact: String, accepted: Bool) throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let path = try directory.write(P256.Signing.PrivateKey().pemRepresentation, named: "vapid.pem")
        let settings = try TestFixtures.appSettings(id: "web", ["vapid_private_key: \(path)", "vapid_contact_email: '\(contact)'"])
        if accepted {
            #expect(try WebPushConfiguration(settings: settings).contact == contact)
        } else {
            let error = try #require(throws: ConfigurationError.self) { try WebPushConfiguration(settings: settings) }
            #expect(error.key == "apps.web.vapid_contact_email")
            #expect(error.description.contains("mailto: or https:"), "\(error)")
        }
    }

    @Test func defaultsFollowSygnal() throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let (configuration, key) = try TestFixtures.configuration(in: directory)
        #expect(configuration.ttl == 900)
        #expect(configuration.maxConnections == 20)
        #expect(configuration.inflightRequestLimit == 512)
        #expect(configuration.allowedEndpoints == nil)
        #expect(configuration.unknownKeys.isEmpty)
        #expect(configuration.vapidKey.rawRepresentation == key.rawRepresentation)
        #expect(configuration.appID == "com.example.web")
        #expect(!configuration.description.contains(key.pemRepresentation))
    }

    @Test func explicitValuesAndUnknownKeys() throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let (configuration, _) = try TestFixtures.configuration(
            in: directory,
            extra: ["ttl: 60", "max_connections: 4", "inflight_request_limit: 10", "allowed_endpoints: ['*.push.example', 'fcm.googleapis.com']", "colour: blue"]
        )
        #expect(configuration.ttl == 60)
        #expect(configuration.maxConnections == 4)
        #expect(configuration.inflightRequestLimit == 10)
        #expect(configuration.allowedEndpoints == ["*.push.example", "fcm.googleapis.com"])
        #expect(configuration.unknownKeys == ["apps.com.example.web.colour"])
    }

    /// `allowed_endpoints` holds `host[:port]` globs: a URL in it would match no endpoint and every
    /// subscription would be rejected, so the entry is refused by name.
    @Test(arguments: ["https://push.example/", "push.example/path", "user@push.example", ""])
    func anAllowedEndpointThatIsNotAHostIsRefused(entry: String) throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let error = try #require(throws: ConfigurationError.self) {
            try TestFixtures.configuration(in: directory, extra: ["allowed_endpoints: ['push.example:*', '\(entry)']"])
        }
        #expect(error.key == "apps.com.example.web.allowed_endpoints[1]")
    }

    /// An empty `allowed_endpoints` would allow no endpoint: refused, naming the key.
    @Test func anEmptyListOfAllowedEndpointsIsRefused() throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let error = try #require(throws: ConfigurationError.self) { try TestFixtures.configuration(in: directory, extra: ["allowed_endpoints: []"]) }
        #expect(error.key == "apps.com.example.web.allowed_endpoints")
        #expect(error.description.contains("leave the key out to allow any"), "\(error)")
    }

    @Test func wrongTypesNameTheKey() throws {
        let directory = try TestFixtures.TemporaryDirectory()
        let error = try #require(throws: ConfigurationError.self) { try TestFixtures.configuration(in: directory, extra: ["ttl: soon"]) }
        #expect(error.key == "apps.com.example.web.ttl")
    }
}
