import Foundation
public import Logging
import Synchronization

/// Writes log events to standard error, as text or as one JSON object per line (`log.format: json`).
///
/// Pushgate never puts tokens, keys or notification content into log metadata; fingerprints from
/// `Redaction` stand in for them.
public struct GatewayLogHandler: LogHandler {
    /// The line format.
    public enum Format: Sendable {
        case text
        case json
    }

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let format: Format

    /// Creates a handler for one logger.
    public init(label: String, level: Logger.Level, format: Format) {
        self.label = label
        self.logLevel = level
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = self.metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let line: String
        switch self.format {
        case .json: line = Self.jsonLine(label: self.label, event: event, metadata: merged)
        case .text: line = Self.textLine(label: self.label, event: event, metadata: merged)
        }
        Self.output.withLock { _ in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    private static let output = Mutex(())

    static func jsonLine(label: String, event: LogEvent, metadata: Logger.Metadata) -> String {
        var object: [String: Any] = [
            "ts": Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            "level": event.level.rawValue,
            "logger": label,
            "msg": event.message.description,
        ]
        for (key, value) in metadata where object[key] == nil {
            object[key] = value.description
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"level":"error","msg":"unencodable log event"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func textLine(label: String, event: LogEvent, metadata: Logger.Metadata) -> String {
        let time = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "\(time) \(event.level.rawValue.uppercased()) \(label): \(event.message)\(fields.isEmpty ? "" : " " + fields)"
    }
}
