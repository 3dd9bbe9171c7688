import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the configuration on `SIGHUP` (`kill -HUP`, `pushgate reload`, systemd's `ExecReload`), one
/// reload at a time, in the order the signals came.
struct ConfigurationReloader: Service {
    private let reconfiguration: GatewayReconfiguration
    private let logger: Logger

    init(reconfiguration: GatewayReconfiguration, logger: Logger) {
        self.reconfiguration = reconfiguration
        self.logger = logger
    }

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            self.logger.notice("SIGHUP: reloading the configuration")
            await self.reconfiguration.reload()
        }
    }
}
