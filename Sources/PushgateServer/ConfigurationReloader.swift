import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the configuration on `SIGHUP` (`kill -HUP`, `pushgate reload`, systemd's `ExecReload`), one
/// reload at a time, in the order the signals came.
struct ConfigurationReloader: Service {
    private let reconfiguration: GatewayReconfiguration
    private let signals: UnixSignalsSequence?
    private let logger: Logger

    /// Creates the reloader; `signals` are the `SIGHUP`s trapped already, else it traps them when it runs.
    init(reconfiguration: GatewayReconfiguration, signals: UnixSignalsSequence?, logger: Logger) {
        self.reconfiguration = reconfiguration
        self.signals = signals
        self.logger = logger
    }

    func run() async throws {
        let signals = if let trapped = self.signals { trapped } else { await UnixSignalsSequence(trapping: .sighup) }
        for await _ in signals.cancelOnGracefulShutdown() {
            self.logger.notice("SIGHUP: reloading the configuration")
            await self.reconfiguration.reload()
        }
    }
}
