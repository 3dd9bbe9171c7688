import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushgateConfig
import PushgateCore

/// `pushgate health`: asks a running gateway's `/health` and exits 0 only when it answers 200, for
/// container health checks and probes that have no HTTP client of their own.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask a running gateway's /health (exit 0 when it answers 200, 1 otherwise).",
        discussion: """
            Without --url the gateway's first listener in the configuration is asked (a wildcard address \
            through loopback), so the same --config, $PUSHGATE_CONFIG or $SYGNAL_CONF the gateway runs with \
            finds it; with none of these, http://127.0.0.1:5000/health. One line on standard error says \
            what was found. Exit status 1 covers every failure (no answer in time, another status, a \
            configuration that cannot be read), as container health checks expect.
            """
    )

    @Option(help: ArgumentHelp("The URL to ask (default: the configured listener's /health).", valueName: "url"))
    var url: String?

    @Option(help: "Seconds to wait for the answer.") var timeout: Int = 5

    @OptionGroup var config: ConfigOptions

    func run() async throws {
        // Checked here rather than in `validate()`, whose refusal exits 2: a container runtime reserves 2,
        // and every failure of this command is 1.
        guard (1...300).contains(self.timeout) else {
            Self.report("--timeout must be between 1 and 300 seconds")
            throw ExitCode(1)
        }
        let target: String
        if let url {
            target = url
        } else {
            do {
                target = try HealthURL.of(self.config.source.load().http)
            } catch {
                Self.report("cannot find the gateway's listener in \(self.config.source.displayDescription): \(error)")
                throw ExitCode(1)
            }
        }
        let request = HTTPClientRequest(url: target)
        // What is said of the URL: never a user name, password or query it carries.
        let shown = Redaction.displayURL(target)
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(self.timeout)))
            // Read (and drop) what little the answer carries, so the connection ends cleanly.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            guard response.status == .ok else {
                Self.report("unhealthy: \(shown) answered \(response.status.code) \(response.status.reasonPhrase)")
                throw ExitCode(1)
            }
            Self.report("healthy: \(shown) answered 200")
        } catch let error as ExitCode {
            throw error
        } catch {
            Self.report("unhealthy: no answer from \(shown): \(Self.describe(error, timeout: self.timeout))")
            throw ExitCode(1)
        }
    }

    private static func report(_ line: String) {
        FileHandle.standardError.write(Data("pushgate health: \(line)\n".utf8))
    }

    /// A short reason: the timeout when the answer did not come in time, else what the connection said.
    private static func describe(_ error: any Error, timeout: Int) -> String {
        if let error = error as? HTTPClientError, [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error) {
            return "none within \(timeout) s"
        }
        return String(describing: error)
    }
}
