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
        configuration.warnings += Self.warnings(source: self.config.source, configuration: configuration, credentials: credentials, now: Date())
        for warning in configuration.warnings {
            FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
        }
        print(ConfigurationSummary(source: self.config.source, configuration: configuration, credentials: credentials, now: Date()).text)
    }

    /// What is valid but likely a mistake, counted with the file's other warnings: a file with no apps
    /// (`serve` would run the built-in sandbox's demo apps instead; a misspelt `apps:` reads so), and
    /// certificates that have expired or expire within 7 days.
    static func warnings(source: ConfigurationSource, configuration: GatewayConfiguration, credentials: [ProviderCredential], now: Date) -> [String] {
        var warnings: [String] = []
        if case .file = source, configuration.apps.isEmpty {
            warnings.append("the file configures no apps: `pushgate serve` runs the built-in sandbox's demo apps instead (is `apps:` misspelt?)")
        }
        for credential in credentials {
            guard let notAfter = credential.notAfter else { continue }
            let day = UTCTime.rfc3339(notAfter)
            switch CredentialExpiry(notAfter: notAfter, now: now) {
            case .expired: warnings.append("apps.\(credential.appID): the \(credential.kind.rawValue) expired at \(day): the provider refuses it")
            case .within(let days) where days <= 7: warnings.append("apps.\(credential.appID): the \(credential.kind.rawValue) expires within \(days) \(days == 1 ? "day" : "days") (at \(day))")
            default: break
            }
        }
        return warnings
    }
}
