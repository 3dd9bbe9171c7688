import Foundation
public import PushgateConfig
public import PushgateHTTP
public import PushgateStatusWire
import PushgateCore

/// The Status push notification server as one ``FrontEnd``: no routes, one service (the Waku poll loop
/// and its handlers) and an outcome observer that drops registrations whose token died. On when the
/// configuration has a `status:` section.
public enum StatusFrontEnd {
    /// The front end's name in logs and delivery reports.
    public static let name = "status"
    /// The app id the gorush-forwarding webhook back end must be registered under (with `gorush_url`).
    public static let gorushAppID = StatusDelivery.gorushAppID

    /// Builds the front end; nil when the configuration does not have a `status` section.
    /// - Parameter relay: the Waku node's REST client (the composition root makes it).
    /// - Throws: ``ConfigurationError`` when the identity key file cannot be used, or when libsecp256k1
    ///   cannot be loaded (the message names the package).
    public static func make(_ environment: FrontEndEnvironment, relay: any WakuRelay) throws -> FrontEnd? {
        guard let settings = environment.configuration.status else { return nil }
        try Self.checkLibrary()
        let key = try settings.identityKeyFile.map { try Self.identityKey(file: $0) }
        let metrics = StatusMetrics(factory: environment.metricsFactory, store: environment.store, logger: environment.logger)
        let (dispatcher, logger) = (environment.dispatcher, environment.logger)
        let delivery = LiveValue(StatusDelivery(settings: settings, apps: environment.configuration.apps, dispatcher: dispatcher, logger: logger))
        let service = StatusServerService(
            settings: settings, configuredKey: key, store: environment.store, storeIsShared: environment.storeIsShared, relay: relay,
            delivery: StatusLiveDelivery(current: delivery), metrics: metrics, logger: environment.logger, pollExecutor: environment.pollExecutor
        )
        let observer = StatusOutcomeObserver(store: environment.store, metrics: metrics, logger: environment.logger)
        return FrontEnd(
            name: Self.name, routes: [], services: [service], countWriters: [metrics.figures.counts.stored], outcomeObserver: observer,
            figures: { await metrics.figures.figures() }
        ) {
            configuration in
            // What is fixed at start stays (`StatusSettings.reloaded(over:)`; a reload names it as needing a
            // restart).
            guard let reloaded = configuration.status?.reloaded(over: settings) else { return }
            delivery.replace(StatusDelivery(settings: reloaded, apps: configuration.apps, dispatcher: dispatcher, logger: logger))
        }
    }

    /// What `check-config` verifies: the library loads, the key file holds a valid key, the named apps
    /// exist with the right types.
    /// - Throws: ``ConfigurationError`` naming the key at fault.
    public static func check(_ configuration: GatewayConfiguration) throws {
        guard let settings = configuration.status else { return }
        try Self.checkLibrary()
        if let file = settings.identityKeyFile { _ = try Self.identityKey(file: file) }
        let kinds = Dictionary(configuration.apps.map { ($0.id, $0.kind) }, uniquingKeysWith: { first, _ in first })
        for (key, app, kind) in [("status.ios_app", settings.iosApp, AppSettings.Kind.apns), ("status.android_app", settings.androidApp, .gcm)] {
            guard let app else { continue }
            guard let found = kinds[app] else { throw ConfigurationError(key: key, "names \(app), which is not configured under apps") }
            guard found == kind else { throw ConfigurationError(key: key, "names \(app), which is a \(found.rawValue) app, not \(kind.rawValue)") }
        }
    }

    /// The public key (compressed, `0x` hex) of a secret key file, for operators and the sandbox.
    public static func publicKeyHex(ofKeyFile path: String) throws -> String {
        StatusServerIdentity(privateKey: try Self.identityKey(file: path)).publicKeyHex
    }

    /// Throws, naming the Debian package, when libsecp256k1 cannot be loaded.
    public static func checkLibrary() throws {
        do {
            try Secp256k1.checkAvailable()
        } catch {
            throw ConfigurationError(key: "status", "\(error)")
        }
    }

    /// Reads a 32-byte secret as hex (`0x` optional, surrounding white space ignored).
    static func identityKey(file: String) throws -> Secp256k1.PrivateKey {
        let key = "status.identity_key_file"
        guard let data = FileManager.default.contents(atPath: file) else { throw ConfigurationError(key: key, "cannot be read") }
        var text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text.removeFirst(2) }
        guard text.utf8.count == 64, let bytes = Hex.decode(text), let privateKey = try? Secp256k1.PrivateKey(bytes: bytes) else {
            throw ConfigurationError(key: key, "must hold a secp256k1 secret key as 64 hex digits (0x optional)")
        }
        return privateKey
    }

    /// Writes a new random secret key file (mode 0600) and returns its public key as `0x` hex.
    public static func writeNewIdentityKey(file: String) throws -> String {
        let privateKey = try Secp256k1.PrivateKey()
        let text = Hex.lowercase(privateKey.rawRepresentation) + "\n"
        guard FileManager.default.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError(key: "status.identity_key_file", "cannot be written")
        }
        return StatusServerIdentity(privateKey: privateKey).publicKeyHex
    }
}
