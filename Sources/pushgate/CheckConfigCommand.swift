import ArgumentParser
import Foundation
import PushgateConfig
import PushgateCore
import PushgateServer

/// `pushgate check-config`: validates a configuration and says what it found.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a configuration file and print what it configures (exit 0 when valid, 2 when not)."
    )

    @OptionGroup var config: ConfigOptions

    func run() throws {
        var configuration = try self.config.load()
        let credentials: [ProviderCredential]
        do {
            configuration.warnings += try Gateway.check(configuration)
            credentials = try Gateway.credentials(configuration)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("pushgate: invalid configuration in \(self.config.source.displayDescription): \(error)\n".utf8))
            throw ExitCode(2)
        }
        for warning in configuration.warnings {
            FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
        }
        print(ConfigurationSummary(source: self.config.source, configuration: configuration, credentials: credentials, now: Date()).text)
    }
}
