import ArgumentParser
import Foundation
import PushgateConfig

/// The `--config` option every subcommand shares, and loading the file it names.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .customLong("config"),
        help: ArgumentHelp("Path of the YAML configuration file (default: $PUSHGATE_CONFIG, else $SYGNAL_CONF, else the embedded defaults).", valueName: "file")
    )
    var path: String?

    var source: ConfigurationSource {
        ConfigurationSource.resolve(option: self.path, environment: ProcessInfo.processInfo.environment)
    }

    /// Loads the configuration, or prints why it cannot be used and exits with status 2.
    func load() throws -> GatewayConfiguration {
        do {
            return try self.source.load()
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("pushgate: invalid configuration in \(self.source.displayDescription): \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}
