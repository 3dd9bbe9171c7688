import ArgumentParser
import Foundation
import Logging
import PushgateConfig
import PushgateCore
import PushgateServer

/// `pushgate send`: one notification through one configured app, with the outcome printed as JSON.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one notification through a configured app and print the outcome as JSON.",
        discussion: "Exit status: 0 delivered, 1 invalid token, rejected or retry later, 2 usage or configuration error. For a Web Push app the token is the subscription JSON."
    )

    @OptionGroup var config: ConfigOptions
    @Option(help: "The app id, as configured under apps.") var app: String
    @Option(help: "The device token (for Web Push, the subscription JSON).") var token: String
    @Option(help: "Alert text shown to the user.") var alert: String?
    @Option(help: "A JSON object of custom data.") var data: String?
    @Option(help: "high or normal; when left out, no priority is sent and the provider's default applies.") var priority: String?
    @Option(help: "alert, background or voip.") var type: String = "alert"

    func validate() throws {
        guard (self.alert == nil) != (self.data == nil) else { throw ValidationError("give exactly one of --alert and --data") }
        if let priority, PushPriority(rawValue: priority) == nil { throw ValidationError("--priority must be high or normal") }
        guard PushKind(rawValue: self.type) != nil else { throw ValidationError("--type must be alert, background or voip") }
        if let data, (try? JSONDecoder().decode([String: JSONValue].self, from: Data(data.utf8))) == nil {
            throw ValidationError("--data must be a JSON object")
        }
    }

    func run() async throws {
        let configuration = try self.config.load()
        var logger = Logger(label: "pushgate")
        logger.logLevel = .warning
        let message = SendMessage(alert: self.alert, data: self.data.flatMap { try? JSONDecoder().decode([String: JSONValue].self, from: Data($0.utf8)) } ?? [:], kind: PushKind(rawValue: self.type) ?? .alert, priority: self.priority.flatMap(PushPriority.init(rawValue:)))
        let outcome: DeliveryOutcome
        do {
            outcome = try await OneShotSender.send(appID: self.app, token: self.token, configuration: configuration, logger: logger) { platform in
                message.notification(for: platform)
            }
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("pushgate: \(error)\n".utf8))
            throw ExitCode(2)
        }
        print(SendMessage.report(app: self.app, outcome: outcome))
        if outcome != .delivered { throw ExitCode(1) }
    }
}
