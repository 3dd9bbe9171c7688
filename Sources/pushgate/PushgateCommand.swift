import ArgumentParser
import Foundation

/// `pushgate`: the push notification gateway.
@main
struct PushgateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushgate",
        abstract: "A push notification gateway: Nextcloud push proxy, Matrix push gateway (Sygnal-compatible), gorush's API and a Status push notification server, delivering through APNs, FCM, Web Push, Huawei Push Kit and UnifiedPush endpoints.",
        discussion: """
            The configuration file is YAML, a superset of Sygnal's sygnal.yaml. It is taken from --config, \
            else from the PUSHGATE_CONFIG or SYGNAL_CONF environment variable; with none of these the \
            embedded defaults apply (listen on 127.0.0.1:5000, SQLite in ./pushgate.sqlite).
            """,
        subcommands: [ServeCommand.self, ReloadCommand.self, CheckConfigCommand.self, SendCommand.self, SandboxCommand.self, StatusProbeCommand.self, HealthCommand.self],
        defaultSubcommand: nil
    )

    /// Runs the command; usage errors exit with status 2 (ArgumentParser's default is 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if Self.exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((Self.fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            Self.exit(withError: error)
        }
    }
}
