public import Logging
import Synchronization

/// The log level and line format of the whole process, which `log.level` and `log.format` set at start
/// and a configuration reload changes: every logger's ``GatewayLogHandler`` reads them for each event.
public enum GatewayLogSettings {
    private static let levelIndex = Atomic<Int>(Self.index(of: .info))
    private static let json = Atomic<Bool>(false)

    /// The lowest level written.
    public static var level: Logger.Level {
        Logger.Level.allCases[Self.levelIndex.load(ordering: .relaxed)]
    }

    /// The line format.
    public static var format: GatewayLogHandler.Format {
        Self.json.load(ordering: .relaxed) ? .json : .text
    }

    /// Sets both for every logger.
    public static func apply(level: Logger.Level, format: GatewayLogHandler.Format) {
        Self.levelIndex.store(Self.index(of: level), ordering: .relaxed)
        Self.json.store(format == .json, ordering: .relaxed)
    }

    private static func index(of level: Logger.Level) -> Int {
        Logger.Level.allCases.firstIndex(of: level) ?? 2
    }
}
