import ArgumentParser
import AsyncHTTPClient
import Foundation
import PushgateConfig
import PushgateStatus
import PushgateStatusWire
import PushgateWaku
import PushgateCore

/// `pushgate status-probe`: a Status client with a throw-away identity that registers, queries and asks
/// for a push through a real Waku node, reporting each step.
struct StatusProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status-probe",
        abstract: "Check a Status push notification server end to end through a Waku node, as a Status client would.",
        discussion: """
            A throw-away identity registers a device token with the server, queries it back, asks for a push \
            to it and unregisters, each through the Waku node's REST API. Each step is printed with its round \
            trip. Use a Waku node other than the one the server polls (each poll empties the node's cache). \
            Exit status: 0 when every step answered as status-go expects, 1 when one did not, 2 on a usage error.
            """
    )

    @Option(help: "The REST API of the Waku node to talk through (http://host:port).") var wakuRestURL: String
    @Option(help: "The server's public key (33 or 65 bytes as hex, 0x optional), as pushgate serve logs it.") var serverKey: String
    @Option(help: "The app the push goes through: apns or fcm, or an app id from --config.") var app: String
    @Option(help: "The device token to register (default: the sandbox's demo token for the app's type).") var token: String?
    @Option(help: "The registration's apn_topic (default: the app's topic when --config names it).") var apnTopic: String?
    @Option(help: "The pubsub topic.") var pubsubTopic: String = "/waku/2/rs/16/32"
    @Option(help: "Seconds to wait for each answer.") var timeout: Int = 10
    @OptionGroup var config: ConfigOptions

    func run() async throws {
        var text = self.serverKey.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("0x") { text.removeFirst(2) }
        guard let bytes = Hex.decode(text), let key = try? Secp256k1.PublicKey(bytes: bytes) else {
            FileHandle.standardError.write(Data("pushgate: --server-key must be a secp256k1 public key as hex\n".utf8))
            throw ExitCode(2)
        }
        let device: StatusProbe.Device
        switch self.app {
        case "apns": device = .init(isAPNs: true, token: self.token ?? String(repeating: "a1", count: 32), apnTopic: self.apnTopic ?? "")
        case "fcm", "gcm": device = .init(isAPNs: false, token: self.token ?? "demo-fcm-registration-token", apnTopic: self.apnTopic ?? "")
        default:
            let configuration = try self.config.load()
            guard let app = configuration.apps.first(where: { $0.id == self.app }), app.kind == .apns || app.kind == .gcm else {
                FileHandle.standardError.write(Data("pushgate: --app must be apns, fcm or an APNs or FCM app of the configuration\n".utf8))
                throw ExitCode(2)
            }
            let isAPNs = app.kind == .apns
            let topic = self.apnTopic ?? (isAPNs ? (try? app.options.string("topic")) ?? nil : nil) ?? ""
            device = .init(isAPNs: isAPNs, token: self.token ?? (isAPNs ? String(repeating: "a1", count: 32) : "demo-fcm-registration-token"), apnTopic: topic)
        }
        // The probe ends within its own timeout, polls included.
        let relay = WakuRESTClient(baseURL: self.wakuRestURL, timeout: .seconds(max(1, self.timeout)), minimumPollTimeout: .zero)
        let probe = StatusProbe(relay: relay, pubsubTopic: self.pubsubTopic, serverKey: key, timeout: .seconds(max(1, self.timeout)))
        let passed = await probe.run(device: device) { step in
            let milliseconds = Double(step.roundTrip.components.seconds) * 1_000 + Double(step.roundTrip.components.attoseconds) / 1e15
            print("\(step.passed ? "ok  " : "FAIL") \(step.name): \(step.detail) (\(String(format: "%.1f", milliseconds)) ms)")
        }
        if !passed { throw ExitCode(1) }
    }
}
