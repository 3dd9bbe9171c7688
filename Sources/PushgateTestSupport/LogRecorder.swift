public import Logging
import Synchronization

/// Keeps every event logged through its loggers (level, message, metadata as text), so a test can check
/// what a component logged and at which level.
///
/// ```swift
/// let log = LogRecorder()
/// let worker = OutboxWorker(…, logger: log.logger())
/// #expect(log.messages(atLeast: .warning).isEmpty)
/// ```
public final class LogRecorder: Sendable {
    /// One logged event.
    public struct Event: Sendable {
        /// Its level.
        public let level: Logger.Level
        /// Its message.
        public let message: String
        /// The logger's and the event's metadata, each value as text.
        public let metadata: [String: String]

        /// The event as one line: its level, its message, then each metadata `key=value` in key order.
        public var line: String {
            ([String(describing: self.level), self.message] + self.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
                .joined(separator: " ")
        }
    }

    private let events = Mutex<[Event]>([])

    /// An empty recorder.
    public init() {}

    /// A logger (every level) whose events this recorder keeps.
    public func logger(label: String = "test") -> Logger {
        var logger = Logger(label: label) { _ in Handler(recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// Every event so far, in the order logged.
    public var all: [Event] { self.events.withLock { $0 } }

    /// The messages of the events at `level` or above, in the order logged.
    public func messages(atLeast level: Logger.Level) -> [String] {
        self.all.filter { $0.level >= level }.map(\.message)
    }

    fileprivate func record(_ event: Event) { self.events.withLock { $0.append(event) } }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { self.metadata[key] }
            set { self.metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = self.metadata.merging(event.metadata ?? [:]) { _, new in new }
            self.recorder.record(Event(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
