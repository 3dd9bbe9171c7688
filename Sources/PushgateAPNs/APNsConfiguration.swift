public import Crypto
public import Foundation
public import PushgateProviderSupport
public import NIOSSL
public import PushgateConfig
import NIOCore
import SwiftASN1
import X509
import PushgateCore

/// The settings of one `type: apns` app, read from Sygnal-compatible keys plus Pushgate's `base_url` and
/// `ca_file`.
///
/// ```yaml
/// apps:
///   im.example.ios:
///     type: apns
///     keyfile: /etc/pushgate/AuthKey_ABC123DEFG.p8
///     key_id: ABC123DEFG
///     team_id: TEAM123456
///     topic: im.example.ios
/// ```
public struct APNsConfiguration: Sendable, CustomStringConvertible {
    /// How the gateway proves it may push for the app.
    public enum Authentication: Sendable, CustomStringConvertible {
        /// A client certificate and its key, both in the PEM file at `file` (`certfile`).
        case certificate(file: String)
        /// Provider tokens signed with a `.p8` key (`keyfile`, `key_id`, `team_id`).
        case token(key: P256.Signing.PrivateKey, keyID: String, teamID: String)

        /// `certificate` or `token <key id>`; never key material.
        public var description: String {
            switch self {
            case .certificate: "certificate"
            case .token(_, let keyID, _): "token \(keyID)"
            }
        }
    }

    /// The app id (or glob) the settings belong to.
    public var appID: String
    /// Certificate or token authentication.
    public var authentication: Authentication
    /// The `apns-topic` (the app's bundle id); VoIP pushes add `.voip`.
    public var topic: String
    /// Production or sandbox (`platform`).
    public var server: APNsServer
    /// Where requests go: `base_url` when set, else the environment's host.
    public var baseURL: URL
    /// Sygnal's `push_type` (checked here, read by the Matrix front end, which states it on its
    /// notifications); nil: each notification's kind gives its push type.
    public var pushType: APNsPushType?
    /// `convert_device_token_to_hex`: front ends base64-decode pushkeys into hex when true (default).
    public var convertDeviceTokenToHex: Bool
    /// `send_badge_counts` (default true).
    public var sendBadgeCounts: Bool
    /// `inflight_request_limit`: at most this many requests at once (default 512).
    public var inflightRequestLimit: Int
    /// `ca_file`: extra trust anchors for TLS to ``baseURL``.
    public var additionalTrustRoots: [NIOSSLCertificate]
    /// Keys of the app that Pushgate does not know, as dotted paths, for a warning.
    public var unknownKeys: [String]
    /// `ping_interval` and `ping_timeout` (seconds): when connections PING and when they are given up.
    public var liveness: APNsLiveness
    /// The HTTP proxy requests go through (the global `proxy` key, else `HTTPS_PROXY`), set by the gateway.
    public var proxy: OutboundProxy? = nil

    /// `<app id>: topic <topic>, <authentication>, <base URL>`; never key material.
    public var description: String {
        "\(self.appID): topic \(self.topic), \(self.authentication), \(self.baseURL.absoluteString)"
    }

    /// Every key an APNs app may carry.
    public static let knownKeys: Set<String> = [
        "type", "certfile", "keyfile", "key_id", "team_id", "topic", "platform", "push_type",
        "convert_device_token_to_hex", "send_badge_counts", "inflight_request_limit", "base_url", "ca_file",
        "ping_interval", "ping_timeout",
    ]

    /// Reads and checks an app's settings, loading its key or certificate.
    /// - Throws: ``ConfigurationError`` naming the first key at fault.
    public init(settings: AppSettings) throws {
        let section = settings.options
        self.appID = settings.id
        self.unknownKeys = section.unknownKeys(known: Self.knownKeys)

        var topic = try section.string("topic").flatMap { $0.isEmpty ? nil : $0 }
        if let certfile = try section.string("certfile"), !certfile.isEmpty {
            let certificateTopic = try Self.checkCertificateFile(certfile, key: section.keyPath("certfile"))
            self.authentication = .certificate(file: certfile)
            if topic == nil { topic = certificateTopic }
            guard topic != nil else {
                throw ConfigurationError(key: section.keyPath("topic"), "is required: the certificate's subject has no UID to take the topic from")
            }
        } else {
            guard let keyfile = try section.string("keyfile"), !keyfile.isEmpty else {
                throw ConfigurationError(key: section.keyPath("keyfile"), "is required when certfile is not set")
            }
            guard let keyID = try section.string("key_id"), !keyID.isEmpty else {
                throw ConfigurationError(key: section.keyPath("key_id"), "is required with keyfile")
            }
            guard let teamID = try section.string("team_id"), !teamID.isEmpty else {
                throw ConfigurationError(key: section.keyPath("team_id"), "is required with keyfile")
            }
            guard topic != nil else {
                throw ConfigurationError(key: section.keyPath("topic"), "is required with keyfile")
            }
            let key = try Self.loadSigningKey(keyfile, key: section.keyPath("keyfile"))
            self.authentication = .token(key: key, keyID: keyID, teamID: teamID)
        }
        self.topic = topic!

        let platform = try section.string("platform")
        guard let server = APNsServer(setting: platform) else {
            throw ConfigurationError(key: section.keyPath("platform"), "must be production or sandbox, found \(platform ?? "")")
        }
        self.server = server

        if let text = try section.string("base_url"), !text.isEmpty {
            guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), url.scheme == "https", url.host != nil,
                TCPPort.connectable.contains(url.port ?? 443)
            else {
                throw ConfigurationError(key: section.keyPath("base_url"), "must be an https URL such as https://127.0.0.1:8443, found \(text)")
            }
            self.baseURL = url
        } else {
            self.baseURL = server.baseURL
        }

        if let pushType = try section.string("push_type"), !pushType.isEmpty {
            guard let value = APNsPushType(rawValue: pushType) else {
                let allowed = APNsPushType.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError(key: section.keyPath("push_type"), "must be one of \(allowed), found \(pushType)")
            }
            self.pushType = value
        } else {
            self.pushType = nil
        }

        self.convertDeviceTokenToHex = try section.bool("convert_device_token_to_hex") ?? true
        self.sendBadgeCounts = try section.bool("send_badge_counts") ?? true
        self.inflightRequestLimit = try section.int("inflight_request_limit", in: 1...1_000_000) ?? 512
        var liveness = APNsLiveness()
        if let interval = try section.seconds("ping_interval", in: 0.01...86_400) { liveness.pingInterval = .nanoseconds(Int64(interval * 1e9)) }
        if let timeout = try section.seconds("ping_timeout", in: 0.01...600) { liveness.pingTimeout = .nanoseconds(Int64(timeout * 1e9)) }
        self.liveness = liveness

        if let caFile = try section.string("ca_file"), !caFile.isEmpty {
            do {
                self.additionalTrustRoots = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw ConfigurationError(key: section.keyPath("ca_file"), "cannot read PEM certificates from \(ConfigurationError.shownPath(caFile))")
            }
            guard !self.additionalTrustRoots.isEmpty else {
                throw ConfigurationError(key: section.keyPath("ca_file"), "holds no certificate: \(ConfigurationError.shownPath(caFile))")
            }
        } else {
            self.additionalTrustRoots = []
        }
    }

    private static func readFile(_ path: String, key: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError(key: key, "cannot read \(ConfigurationError.shownPath(path))")
        }
        return text
    }

    /// Loads the `.p8` key: a PEM P-256 private key (PKCS#8 or SEC 1).
    private static func loadSigningKey(_ path: String, key: String) throws -> P256.Signing.PrivateKey {
        let pem = try Self.readFile(path, key: key)
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw ConfigurationError(key: key, "is not a PEM P-256 private key (.p8): \(ConfigurationError.shownPath(path))")
        }
    }

    /// Checks that the PEM file holds a certificate and an unencrypted private key; returns the
    /// certificate subject's UID, the topic Apple puts there.
    private static func checkCertificateFile(_ path: String, key: String) throws -> String? {
        let pem = try Self.readFile(path, key: key)
        let certificate: Certificate
        do {
            let documents = try PEMDocument.parseMultiple(pemString: pem)
            guard let first = documents.first(where: { $0.discriminator == "CERTIFICATE" }) else {
                throw ConfigurationError(key: key, "holds no certificate: \(ConfigurationError.shownPath(path))")
            }
            certificate = try Certificate(pemDocument: first)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(key: key, "holds no readable certificate: \(ConfigurationError.shownPath(path))")
        }
        let bytes = Array(pem.utf8)
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(bytes: bytes, format: .pem)
        } catch {
            throw ConfigurationError(key: key, "holds no unencrypted private key: \(ConfigurationError.shownPath(path))")
        }
        // A rotated file holding the new certificate with the old key: TLS would refuse it when the
        // back end is made (at start, or at a reload), with no word of which file.
        do {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(bytes).map { .certificate($0) }
            tls.privateKey = .privateKey(privateKey)
            _ = try NIOSSLContext(configuration: tls)
        } catch {
            throw ConfigurationError(key: key, "holds a private key that does not belong to its certificate: \(ConfigurationError.shownPath(path))")
        }
        return CertificateTopic.userID(of: certificate)
    }
}
