import Foundation
public import Logging
import PushgateCore

/// Writes log events to standard error, as text or as one JSON object per line (`log.format: json`).
///
/// Events at `info` and below (the access log's line per request among them) go through a
/// ``LogLineWriter``, whose thread writes them shortly after, many in one call, so that no request waits
/// for standard error; `notice` and above are written before ``log(event:)`` returns.
///
/// Pushgate never puts tokens, keys or notification content into log metadata; fingerprints from
/// `Redaction` stand in for them.
public struct GatewayLogHandler: LogHandler {
    /// The line format.
    public enum Format: Sendable {
        case text
        case json
    }

    /// The process's level (``GatewayLogSettings``, which a reload changes), unless this handler's logger
    /// was given a level of its own.
    public var logLevel: Logger.Level {
        get { self.ownLevel ?? GatewayLogSettings.level }
        set { self.ownLevel = newValue }
    }
    public var metadata: Logger.Metadata = [:]
    private var ownLevel: Logger.Level?
    private let label: String
    private var format: Format { GatewayLogSettings.format }

    /// Creates a handler for one logger; the level and format are the process's
    /// (``GatewayLogSettings/apply(level:format:)``).
    public init(label: String) {
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        self.write(event, fields: Self.fields(self.metadata, event.metadata))
    }

    /// Logs `message` at `level` with this handler's metadata and `fields`, as ``log(event:)`` logs the same
    /// entries given as the event's metadata (`fields` win over the handler's), but without a metadata
    /// dictionary for them: the access log's line, written for every request at the default level, comes
    /// this way (benchmarks/README.md, 2026-12-01). Checks the level itself, as `Logger` does.
    func log(
        level: Logger.Level, _ message: Logger.Message, fields given: consuming [Field],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        guard self.logLevel <= level else { return }
        let event = LogEvent(level: level, message: message, metadata: nil, source: "PushgateServer", file: file, function: function, line: line)
        self.write(event, fields: Self.fields(self.metadata, given: given))
    }

    private func write(_ event: LogEvent, fields: consuming [Field]) {
        var line: [UInt8]
        switch self.format {
        case .json: line = Self.jsonLine(label: self.label, event: event, fields: fields)
        case .text: line = Self.textLine(label: self.label, event: event, fields: fields)
        }
        line.append(UInt8(ascii: "\n"))
        // The access log's lines and other chatter go through the writer thread; what an operator must
        // not lose (a start, a stop, warnings and worse) is written before `log` returns.
        let writer = Self.standardError(self.format)
        if event.level >= .notice {
            writer.writeNow(line)
        } else {
            writer.enqueue(line)
        }
    }

    /// The most log bytes buffered for the writer thread; lines beyond them are dropped and counted.
    static let bufferLimit = 4 * 1024 * 1024

    private static let textWriter = Self.makeWriter(.text)
    private static let jsonWriter = Self.makeWriter(.json)

    /// A writer to standard error whose dropped-lines warning is a line of `format`.
    private static func makeWriter(_ format: Format) -> LogLineWriter {
        LogLineWriter(descriptor: 2, limit: Self.bufferLimit) { count in
            let fields = [Field(key: "count", value: "\(count)")]
            let line = switch format {
            case .text: Self.textLine(label: "pushgate", event: Self.droppedEvent, fields: fields)
            case .json: Self.jsonLine(label: "pushgate", event: Self.droppedEvent, fields: fields)
            }
            return line + [UInt8(ascii: "\n")]
        }
    }

    private static let droppedEvent = LogEvent(
        level: .warning, message: "log lines dropped: standard error did not keep up", metadata: nil, source: "pushgate",
        file: #fileID, function: #function, line: #line
    )

    /// Writes what waits for the writer thread, before it returns: for the end of the process, whose last
    /// lines may have been buffered behind a write under way.
    public static func flushStandardError() {
        Self.textWriter.flush()
        Self.jsonWriter.flush()
    }

    private static func standardError(_ format: Format) -> LogLineWriter {
        switch format {
        case .text: Self.textWriter
        case .json: Self.jsonWriter
        }
    }

    /// One metadata entry of a line.
    struct Field {
        let key: String
        let value: Logger.MetadataValue

        /// The request id the value holds, which both formats write without making its string.
        var requestID: GatewayRequestID? {
            guard case .stringConvertible(let value) = self.value else { return nil }
            return value as? GatewayRequestID
        }
    }

    /// The logger's metadata and `given` fields (the fields winning), in no order.
    static func fields(_ logger: Logger.Metadata, given: consuming [Field]) -> [Field] {
        var fields = given
        let count = fields.count
        for (key, value) in logger where !fields[..<count].contains(where: { $0.key == key }) {
            fields.append(Field(key: key, value: value))
        }
        return fields
    }

    /// The logger's and the event's metadata (the event's winning), in no order: without merging them
    /// into a new dictionary first.
    static func fields(_ logger: Logger.Metadata, _ event: Logger.Metadata?) -> [Field] {
        var given: [Field] = []
        given.reserveCapacity(logger.count + (event?.count ?? 0))
        for (key, value) in event ?? [:] { given.append(Field(key: key, value: value)) }
        return Self.fields(logger, given: given)
    }

    /// The line as one JSON object (keys sorted, as ``JSONText/encode(_:)`` writes objects): the time, the
    /// level, the logger, the message and the fields (each value as a string), written member by member
    /// in key order without a dictionary.
    static func jsonLine(label: String, event: LogEvent, fields: consuming [Field]) -> [UInt8] {
        var time: [UInt8] = []
        LogTimestamp.append(to: &time)
        let message = event.message.description
        var members = fields
        // The members every line has; a field of the same key is left out.
        members.removeAll { field in
            switch field.key {
            case "ts", "level", "logger", "msg": true
            default: false
            }
        }
        members.append(Field(key: "ts", value: .string(String(decoding: time, as: UTF8.self))))
        members.append(Field(key: "level", value: .string(event.level.rawValue)))
        members.append(Field(key: "logger", value: .string(label)))
        members.append(Field(key: "msg", value: .string(message)))
        members.sort { $0.key < $1.key }
        var writer = JSONText.ObjectWriter(capacity: 256)
        for member in members {
            if case .string(let text) = member.value {
                writer.add(key: member.key, text)
            } else if let id = member.requestID {
                // Hex digits after the prefix: nothing to escape, and written in place.
                writer.add(key: member.key) { bytes in
                    bytes.append(UInt8(ascii: "\""))
                    id.append(to: &bytes)
                    bytes.append(UInt8(ascii: "\""))
                }
            } else {
                writer.add(key: member.key, member.value.description)
            }
        }
        guard writer.isExact else { return Self.jsonLineThroughDictionary(members) }
        return writer.finish()
    }

    /// The JSON line of `members` through a dictionary and ``JSONText/encode(_:)``, which leaves keys
    /// outside ASCII to `JSONEncoder` and its order.
    static func jsonLineThroughDictionary(_ members: [Field]) -> [UInt8] {
        var object: [String: JSONValue] = [:]
        for member in members where object[member.key] == nil {
            object[member.key] = .string(member.value.description)
        }
        guard let line = try? JSONText.encode(.object(object)) else {
            return Array(#"{"level":"error","msg":"unencodable log event"}"#.utf8)
        }
        return line
    }

    /// The level as the text format writes it.
    private static func levelName(_ level: Logger.Level) -> StaticString {
        switch level {
        case .trace: "TRACE"
        case .debug: "DEBUG"
        case .info: "INFO"
        case .notice: "NOTICE"
        case .warning: "WARNING"
        case .error: "ERROR"
        case .critical: "CRITICAL"
        }
    }

    static func textLine(label: String, event: LogEvent, fields: consuming [Field]) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(160)
        LogTimestamp.append(to: &line)
        line.append(UInt8(ascii: " "))
        Self.levelName(event.level).withUTF8Buffer { line.append(contentsOf: $0) }
        line.append(UInt8(ascii: " "))
        line.appendUTF8(label)
        line.append(UInt8(ascii: ":"))
        line.append(UInt8(ascii: " "))
        line.appendUTF8(event.message.description)
        var fields = fields
        fields.sort { $0.key < $1.key }
        for field in fields {
            line.append(UInt8(ascii: " "))
            line.appendUTF8(field.key)
            line.append(UInt8(ascii: "="))
            // A string value is its own description; asking the enum for it costs more than the copy. The
            // request id, on every line of a request, is written without making its string.
            if case .string(let text) = field.value {
                line.appendUTF8(text)
            } else if let id = field.requestID {
                id.append(to: &line)
            } else {
                line.appendUTF8(field.value.description)
            }
        }
        return line
    }
}
