import Crypto
public import Foundation
public import Hummingbird
public import Logging
import NIOCore
import PushgateCore
public import ServiceLifecycle

/// The provider emulators together, with ready-made credentials: what `pushgate sandbox` runs, and
/// what `pushgate serve` runs in-process when no apps are configured.
///
/// ``prepare(directory:host:logger:)`` picks the ports, writes the credentials and an example
/// configuration into `directory`, and returns the emulators as services to run.
public struct SandboxEnvironment: Sendable {
    /// Every delivery the emulators received.
    public let log: SandboxDeliveryLog
    /// The APNs emulator (HTTP/2 over TLS).
    public let apns: APNsEmulator
    /// The FCM emulator (OAuth token endpoint and messages:send).
    public let fcm: FCMEmulator
    /// The Web Push service emulator.
    public let webPush: WebPushEmulator
    /// The Huawei Push Kit emulator (OAuth token endpoint and messages:send).
    public let hms: HMSEmulator
    /// A UnifiedPush distributor's push server (endpoints issued and posted to).
    public let unifiedPush: UnifiedPushEmulator
    /// A Waku relay network with two REST nodes: one for the gateway's Status server, one for clients
    /// (`pushgate status-probe`).
    public let waku: WakuNetworkEmulator
    /// The address the emulators listen on.
    public let host: String
    /// The APNs, FCM, Web Push, HMS and UnifiedPush emulators' ports.
    public let apnsPort: Int, fcmPort: Int, webPushPort: Int, hmsPort: Int, unifiedPushPort: Int
    /// The Waku REST nodes' ports: the one the gateway polls, and the one clients use.
    public let wakuServerPort: Int, wakuClientPort: Int
    /// Where the credentials and the example configuration are.
    public let directory: URL
    /// A device token each demo app delivers to.
    public let demoAPNsToken: String, demoFCMToken: String, demoWebPushSubscription: String, demoHMSToken: String
    /// The UnifiedPush endpoint the demo app delivers to (a Matrix pusher's pushkey).
    public let demoUnifiedPushEndpoint: String
    private let logger: Logger

    /// The app ids of the demo apps.
    public static let demoAppIDs = (apns: "demo.apns", fcm: "demo.fcm", webPush: "demo.webpush", hms: "demo.hms", unifiedPush: "demo.unifiedpush")

    /// Creates the emulators and writes their credentials.
    /// - Throws: when the directory cannot be written or no free port is found.
    /// - Parameter wakuCacheCapacity: how many messages each Waku node's relay cache holds (small, to see the
    ///   Status server catch up from the store what the cache dropped).
    public static func prepare(directory: URL, host: String = "127.0.0.1", wakuCacheCapacity: Int = 1_000, logger: Logger) throws -> SandboxEnvironment {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard let ports = FreePort.pickBlock(count: 7, host: host), ports.count == 7 else {
            throw SandboxError("no free port on \(host)")
        }
        let (apnsPort, fcmPort, webPushPort, hmsPort) = (ports[0], ports[1], ports[2], ports[3])
        let log = SandboxDeliveryLog(capacity: 1_000)
        let apns = try APNsEmulator(bundleID: "im.pushgate.sandbox", log: log)
        let fcm = try FCMEmulator(log: log)
        let webPush = WebPushEmulator(log: log)
        let hms = HMSEmulator(log: log)
        let unifiedPush = UnifiedPushEmulator(log: log)
        let unifiedPushPort = ports[6]
        let waku = WakuNetworkEmulator(cacheCapacity: max(1, wakuCacheCapacity), logger: logger)
        let subscription = webPush.issuer.issue(id: "demo")
        let environment = SandboxEnvironment(
            log: log, apns: apns, fcm: fcm, webPush: webPush, hms: hms, unifiedPush: unifiedPush, waku: waku, host: host, apnsPort: apnsPort, fcmPort: fcmPort,
            webPushPort: webPushPort, hmsPort: hmsPort, unifiedPushPort: unifiedPushPort, wakuServerPort: ports[4], wakuClientPort: ports[5], directory: directory,
            demoAPNsToken: String(repeating: "a1", count: 32), demoFCMToken: "demo-fcm-registration-token",
            demoWebPushSubscription: subscription.json(baseURL: "http://\(host):\(webPushPort)"), demoHMSToken: "demo-hms-token",
            demoUnifiedPushEndpoint: unifiedPush.issue(baseURL: "http://\(host):\(unifiedPushPort)", id: "demo"), logger: logger
        )
        try environment.writeCredentials()
        return environment
    }

    private func path(_ name: String) -> String { self.directory.appendingPathComponent(name).path }

    private func writeCredentials() throws {
        try self.apns.privateKeyPEM.write(toFile: self.path("apns-key.p8"), atomically: true, encoding: .utf8)
        defer {
            // Secrets readable by their owner only, whatever the umask (the service account is so already).
            for secret in ["apns-key.p8", "vapid.pem", "hms-app-secret"] {
                try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: self.path(secret))
            }
        }
        try self.apns.certificateAuthority.caCertificatePEM.write(toFile: self.path("sandbox-ca.pem"), atomically: true, encoding: .utf8)
        try self.fcm.writeServiceAccount(baseURL: "http://\(self.host):\(self.fcmPort)", to: self.path("fcm-service-account.json"))
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: self.path("vapid.pem"), atomically: true, encoding: .utf8)
        try self.hms.appSecret.write(toFile: self.path("hms-app-secret"), atomically: true, encoding: .utf8)
        try self.demoWebPushSubscription.write(toFile: self.path("webpush-subscription.json"), atomically: true, encoding: .utf8)
        try (self.demoUnifiedPushEndpoint + "\n").write(toFile: self.path("unifiedpush-endpoint.txt"), atomically: true, encoding: .utf8)
        try ("# Pushgate sandbox: apps that deliver to the local provider emulators.\n" + self.appsYAML + self.statusYAML)
            .write(toFile: self.path("pushgate-sandbox.yaml"), atomically: true, encoding: .utf8)
    }

    /// An `apps:` section with one demo app per provider, pointed at the emulators.
    public var appsYAML: String {
        """
        # Demo tokens: APNs \(self.demoAPNsToken), FCM \(self.demoFCMToken), HMS \(self.demoHMSToken),
        # Web Push: the subscription in webpush-subscription.json; UnifiedPush (a Matrix pusher's pushkey):
        # \(self.demoUnifiedPushEndpoint), more from POST \(self.unifiedPushURL)/sandbox/unifiedpush/endpoints.
        # As a Matrix pusher's pushkey the APNs token is base64 (\(Data(Hex.decode(self.demoAPNsToken) ?? []).base64EncodedString())); Matrix has no HMS.
        # Special tokens make each failure: see GET /sandbox/deliveries for what arrived.
        apps:
          \(Self.demoAppIDs.apns):
            type: apns
            keyfile: \(self.path("apns-key.p8"))
            key_id: \(self.apns.keyID)
            team_id: \(self.apns.teamID)
            topic: \(self.apns.bundleID)
            base_url: https://\(self.host):\(self.apnsPort)
            ca_file: \(self.path("sandbox-ca.pem"))
          \(Self.demoAppIDs.fcm):
            type: gcm
            api_version: v1
            project_id: \(self.fcm.projectID)
            service_account_file: \(self.path("fcm-service-account.json"))
            base_url: http://\(self.host):\(self.fcmPort)
          \(Self.demoAppIDs.webPush):
            type: webpush
            vapid_private_key: \(self.path("vapid.pem"))
            vapid_contact_email: sandbox@pushgate.invalid
            allowed_endpoints: ['\(self.host):\(self.webPushPort)']
          \(Self.demoAppIDs.hms):
            type: hms
            app_id: '\(self.hms.appID)'
            app_secret_file: \(self.path("hms-app-secret"))
            base_url: http://\(self.host):\(self.hmsPort)
            token_url: http://\(self.host):\(self.hmsPort)/oauth2/v3/token
          \(Self.demoAppIDs.unifiedPush):
            type: unifiedpush
            allowed_endpoints: ['\(self.host):\(self.unifiedPushPort)']

        """
    }

    /// A `status:` section, commented out, for a Status server on the emulated Waku network delivering
    /// through the demo apps (its identity is generated once and kept in the store).
    public var statusYAML: String {
        """
        # A Status push notification server on the emulated Waku network: uncomment to run one (clients use
        # the node at \(self.wakuClientURL), for example `pushgate status-probe --waku-rest-url \(self.wakuClientURL) …`).
        # status:
        #   waku_rest_url: \(self.wakuServerURL)
        #   ios_app: \(Self.demoAppIDs.apns)
        #   android_app: \(Self.demoAppIDs.fcm)
        #   waku_cache_capacity: \(self.waku.cacheCapacity)

        """
    }

    /// The UnifiedPush emulator (endpoints and the issuer).
    public var unifiedPushURL: String { "http://\(self.host):\(self.unifiedPushPort)" }

    /// The REST API of the Waku node the gateway polls.
    public var wakuServerURL: String { "http://\(self.host):\(self.wakuServerPort)" }
    /// The REST API of the Waku node clients talk through.
    public var wakuClientURL: String { "http://\(self.host):\(self.wakuClientPort)" }

    /// The emulators, as services: APNs (TLS, HTTP/2), FCM, and Web Push (which also answers
    /// `GET /sandbox/deliveries`).
    public func services() throws -> [any Service] {
        let apns = try self.apns.makeApplication(host: self.host, port: self.apnsPort, logger: self.logger)
        let fcm = FCMEmulatorServer(emulator: self.fcm, host: self.host, port: self.fcmPort, logger: self.logger)
        let origin = "http://\(self.host):\(self.webPushPort)"
        let log = self.log
        let webPush = self.webPush.makeApplication(
            host: self.host, port: self.webPushPort, origin: origin, deliveries: { Array(Self.deliveriesJSON(log)) }, logger: self.logger
        )
        let hms = self.hms.makeApplication(host: self.host, port: self.hmsPort, logger: self.logger)
        let unifiedPush = self.unifiedPush.makeApplication(
            host: self.host, port: self.unifiedPushPort, deliveries: { Array(Self.deliveriesJSON(log)) }, logger: self.logger
        )
        let wakuServer = self.waku.makeNode(name: "gateway").makeApplication(host: self.host, port: self.wakuServerPort)
        let wakuClient = self.waku.makeNode(name: "clients").makeApplication(host: self.host, port: self.wakuClientPort)
        return [
            SandboxApplication(name: "waku-node-gateway", application: wakuServer), SandboxApplication(name: "waku-node-clients", application: wakuClient),
            SandboxApplication(name: "apns-emulator", application: apns), fcm, SandboxApplication(name: "webpush-emulator", application: webPush),
            SandboxApplication(name: "hms-emulator", application: hms), SandboxApplication(name: "unifiedpush-emulator", application: unifiedPush),
        ]
    }

    /// `GET /sandbox/deliveries`: every recorded delivery as a JSON array, oldest first.
    public static func deliveriesResponse(_ log: SandboxDeliveryLog) -> Response {
        let body = Self.deliveriesJSON(log)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension SandboxEnvironment {
    /// Every recorded delivery as a JSON array, oldest first (sorted keys, ISO 8601 dates with milliseconds).
    static func deliveriesJSON(_ log: SandboxDeliveryLog) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            // Milliseconds, so that benchmarks can time deliveries.
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            var container = encoder.singleValueContainer()
            try container.encode(formatter.string(from: date))
        }
        return (try? encoder.encode(log.all)) ?? Data("[]".utf8)
    }
}

/// A Hummingbird application run as a named service.
struct SandboxApplication<Wrapped: ApplicationProtocol>: Service, CustomStringConvertible {
    let name: String
    let application: Wrapped
    var description: String { self.name }
    func run() async throws { try await self.application.run() }
}

/// Why the sandbox could not start.
public struct SandboxError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
