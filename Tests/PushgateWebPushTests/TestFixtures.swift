import Crypto
import Foundation
import Logging
import PushgateConfig
import PushgateProviderSupport
import Synchronization
@testable import PushgateWebPush

/// Keys, files and configurations shared by the tests.
enum TestFixtures {
    /// A directory removed when the value is released.
    final class TemporaryDirectory: Sendable {
        let url: URL

        init() throws {
            self.url = FileManager.default.temporaryDirectory.appendingPathComponent("pushgate-webpush-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
        }

        func write(_ text: String, named name: String) throws -> String {
            let path = self.url.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        deinit { try? FileManager.default.removeItem(at: self.url) }
    }

    /// A subscriber: the browser's key pair and auth secret, and the token it would register.
    struct Subscriber {
        let key = P256.KeyAgreement.PrivateKey()
        let authSecret: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) }

        func token(endpoint: String, padded: Bool = false) -> String {
            var p256dh = Base64URL.encode(self.key.publicKey.x963Representation)
            var auth = Base64URL.encode(self.authSecret)
            if padded {
                while p256dh.count % 4 != 0 { p256dh += "=" }
                while auth.count % 4 != 0 { auth += "=" }
            }
            return #"{"endpoint": "\#(endpoint)", "keys": {"p256dh": "\#(p256dh)", "auth": "\#(auth)"}}"#
        }

        var subscriptionKeys: (P256.KeyAgreement.PublicKey, [UInt8]) { (self.key.publicKey, self.authSecret) }
    }

    /// The app settings parsed from a `type: webpush` entry with `options` (YAML lines) under app `id`.
    static func appSettings(id: String = "com.example.web", _ lines: [String]) throws -> AppSettings {
        let yaml = "apps:\n  \(id):\n    type: webpush\n" + lines.map { "    \($0)\n" }.joined()
        let configuration = try GatewayConfiguration(yaml: yaml)
        return configuration.apps[0]
    }

    /// A full configuration with a fresh VAPID key written to `directory`.
    static func configuration(in directory: TemporaryDirectory, extra: [String] = []) throws -> (WebPushConfiguration, P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let path = try directory.write(key.pemRepresentation, named: "vapid.pem")
        let settings = try Self.appSettings(["vapid_private_key: \(path)", "vapid_contact_email: ops@example.org"] + extra)
        return (try WebPushConfiguration(settings: settings), key)
    }
}
