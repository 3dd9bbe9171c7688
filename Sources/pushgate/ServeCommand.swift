import ArgumentParser
import Foundation
import Logging
import NIOCore
import PushgateConfig
import PushgateCore
import PushgateServer
import Synchronization
import UnixSignals

/// `pushgate serve`: runs the gateway until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the gateway. SIGTERM or SIGINT finishes requests in flight and exits 0; SIGHUP reloads the configuration."
    )

    @OptionGroup var config: ConfigOptions

    @Option(
        name: .customLong("pid-file"),
        help: ArgumentHelp("Write the process id to this file (for `pushgate reload --pid-file`); removed at exit.", valueName: "file")
    )
    var pidFile: String?

    func run() async throws {
        // The last lines (a stop, a failed start) are written before the process ends, also when they were
        // buffered behind a write of the log's thread.
        defer { GatewayLogHandler.flushStandardError() }
        // First, before the gateway starts its threads: arenas made before the limit stay.
        let allocator = ProcessAllocator.current
        let arenas = MallocArenaLimit.apply(cores: System.coreCount, allocator: allocator)
        let configuration = try self.config.load()
        let level = Logger.Level(rawValue: configuration.log.level) ?? .info
        let format: GatewayLogHandler.Format = configuration.log.format == .json ? .json : .text
        GatewayLogSettings.apply(level: level, format: format)
        LoggingSystem.bootstrap { label in GatewayLogHandler(label: label) }
        let logger = Logger(label: "pushgate")

        logger.notice("starting", metadata: ["config": "\(self.config.source.displayDescription)"])
        for warning in configuration.warnings {
            logger.warning("configuration: \(warning)")
        }
        if case .file = self.config.source, configuration.apps.isEmpty {
            logger.warning("configuration: the file configures no apps: running the built-in sandbox's demo apps instead (is `apps:` misspelt?)")
        }
        // Every connection takes a descriptor: the usual soft limit of 1,024 is soon reached by idle clients.
        let descriptors = FileDescriptorLimit.raiseToHardLimit()
        logger.info("file descriptor limit", metadata: ["limit": "\(descriptors)"])
        // Set before anything makes the shared event loops or runs a CPU-heavy step. With a loop per core,
        // or Swift's shared pool beside the loops, on a small machine the gateway's threads outnumber the
        // cores and hand work to each other through wake-ups (benchmarks/README.md, 2026-11-28, late
        // morning and evening).
        let cores = System.coreCount
        let ioThreads = configuration.http.ioThreadCount(cores: cores)
        NIOSingletons.groupLoopCountSuggestion = ioThreads
        ComputePool.threadCountSuggestion = configuration.http.computeThreadCount(cores: cores)
        let computeThreads = ComputePool.executor.threadCount  // starts them
        logger.info(
            "threads",
            metadata: [
                "io": "\(ioThreads)", "compute": "\(computeThreads)", "cores": "\(cores)",
                "allocator": "\(allocator.name)",
                "malloc_arenas": "\(allocator.jemallocArenas.map(String.init) ?? arenas.map(String.init) ?? "default")",
            ]
        )
        // SIGHUP (`pushgate reload`, the systemd unit's ExecReload) would end the process by default:
        // trapped from here on, and read by the gateway's reloader once it runs.
        let hangUpSignals = await UnixSignalsSequence(trapping: .sighup)
        // Once SIGHUP is trapped (a reload sent as soon as the file appears must not end the process), and
        // before anything listens: a pid file that names a running gateway stays that gateway's.
        let pidFile: PIDFile?
        do {
            pidFile = try self.pidFile.map { try PIDFile(path: $0) }
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
        defer { pidFile?.remove() }
        let gateway: Gateway
        do {
            let source = self.config.source
            let released = Atomic<Bool>(false)
            gateway = try await Gateway.build(
                configuration: configuration, logger: logger,
                reloadSource: Gateway.ReloadSource(description: source.displayDescription, signals: hangUpSignals) { try source.load() },
                onListening: { name, _, _ in
                    // Once the gateway listens, start-up's code is done with: its pages leave the resident set.
                    guard name == "http", !released.exchange(true, ordering: .relaxed), let sizes = StartUpPages.release() else { return }
                    logger.info(
                        "start-up pages released",
                        metadata: ["resident_mib_before": "\(sizes.before >> 20)", "resident_mib_after": "\(sizes.after >> 20)"]
                    )
                }
            )
        } catch let error as ConfigurationError {
            logger.critical("invalid configuration: \(error)")
            throw ExitCode(2)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }
        do {
            try await gateway.run(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch let error as ListenerError {
            // A listener that cannot bind (its address in use or unknown) says which one, not only errno.
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        } catch {
            logger.critical("stopped on an error: \(error)")
            throw ExitCode(1)
        }
        logger.notice("stopped")  // a notice: written, after what was buffered, before the process ends
    }
}
