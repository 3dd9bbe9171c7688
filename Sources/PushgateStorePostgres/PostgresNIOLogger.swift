import Logging

/// The logger postgres-nio is given: the gateway's, but never below `debug`.
///
/// At `trace` postgres-nio logs every protocol message it receives, rows included, as a hex dump of their
/// bytes: the Status server's private key, device tokens and payloads would reach the log. Its `debug`
/// lines name connections and errors only. So the level follows the gateway's (a reload changes it), but
/// `trace` counts as `debug` here.
enum PostgresNIOLogger {
    /// The lowest level postgres-nio may log at.
    static let floor = Logger.Level.debug

    /// `logger`, with `trace` raised to ``floor``.
    static func wrapping(_ logger: Logger) -> Logger {
        Logger(label: logger.label) { _ in FloorLevelHandler(base: logger.handler, floor: Self.floor) }
    }

    /// A handler whose level is its base handler's, but at least `floor`.
    struct FloorLevelHandler: LogHandler {
        var base: any LogHandler
        let floor: Logger.Level

        var logLevel: Logger.Level {
            get { max(self.base.logLevel, self.floor) }
            set { self.base.logLevel = newValue }
        }

        var metadata: Logger.Metadata {
            get { self.base.metadata }
            set { self.base.metadata = newValue }
        }

        var metadataProvider: Logger.MetadataProvider? {
            get { self.base.metadataProvider }
            set { self.base.metadataProvider = newValue }
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { self.base[metadataKey: key] }
            set { self.base[metadataKey: key] = newValue }
        }

        func log(event: LogEvent) {
            guard event.level >= self.floor else { return }
            self.base.log(event: event)
        }
    }
}
