import Foundation
import PushgateCore
import PushgateStatusWire

/// The Waku REST API's message JSON: nwaku's shape (`payload` and `meta` standard base64 with padding,
/// `timestamp` in nanoseconds), read leniently as go-waku writes it too (URL-safe or unpadded base64,
/// `version`/`timestamp` absent, `ephemeral` null).
///
/// Read by walking the text (``JSONParser``), without a dictionary for every message: a poll's answer
/// holds as many messages as the node's cache, and the Status server reads one every poll.
enum WakuMessageJSON {
    /// The body of a publish: `version`, `timestamp` and `ephemeral` always written (nwaku defaults an
    /// absent version to 0, which clients before 2.38 do not decrypt).
    static func publishBody(_ message: WakuMessage) -> [UInt8] {
        var text = "{\"payload\":\"" + Data(message.payload).base64EncodedString() + "\""
        text += ",\"contentTopic\":" + Self.quoted(message.contentTopic)
        text += ",\"version\":\(message.version),\"timestamp\":\(message.timestamp)"
        if !message.meta.isEmpty { text += ",\"meta\":\"" + Data(message.meta).base64EncodedString() + "\"" }
        text += ",\"ephemeral\":\(message.ephemeral)}"
        return Array(text.utf8)
    }

    /// The messages of a poll's answer (a JSON array; `null` for none, as go-waku writes an empty answer).
    /// Entries that cannot be read are skipped: one bad message must not stop the others.
    static func messages(from body: [UInt8]) throws(WakuRelayError) -> [WakuMessage] {
        let messages: [WakuMessage]?
        do {
            // Nil: JSON, but not an array.
            messages = try JSONParser.walk(body) { parser throws(JSONParser.Failure) -> [WakuMessage]? in
                guard parser.nextKind == .array else {
                    let isNull = parser.nextKind == .null
                    try parser.skipValue()
                    return isNull ? [] : nil
                }
                var read: [WakuMessage] = []
                try parser.readElements { parser throws(JSONParser.Failure) in
                    if let message = try Self.message(&parser) { read.append(message) }
                }
                return read
            }
        } catch {
            throw .malformedAnswer("not JSON")
        }
        guard let messages else { throw .malformedAnswer("not a JSON array") }
        return messages
    }

    /// Reads the next value, a message object; nil (the value read past) when it is not one or lacks a
    /// payload or a content topic that can be read.
    static func message(_ parser: inout JSONParser) throws(JSONParser.Failure) -> WakuMessage? {
        guard parser.nextKind == .object else {
            try parser.skipValue()
            return nil
        }
        var payloadText: String?
        var contentTopic: String?
        var metaText: String?
        var version: Int64?
        var timestamp: Int64?
        var ephemeral = false
        // Of duplicate keys the last counts, as in ``JSONParser/readValue()``.
        try parser.readMembers { parser, key throws(JSONParser.Failure) in
            switch key {
            case "payload": payloadText = try parser.readValue().stringValue
            // go-waku's protobuf-shaped answers (its store's) name it in snake case.
            case "contentTopic", "content_topic": contentTopic = try parser.readValue().stringValue
            case "meta": metaText = try parser.readValue().stringValue
            case "version": version = try parser.readExactInteger()
            case "timestamp": timestamp = try parser.readExactInteger()
            case "ephemeral": ephemeral = try parser.readValue() == .bool(true)
            default: try parser.skipValue()
            }
        }
        guard let payloadText, let payload = Self.base64(payloadText), let contentTopic, !contentTopic.isEmpty else { return nil }
        return WakuMessage(
            payload: payload, contentTopic: contentTopic, version: version.map { Int(truncatingIfNeeded: $0) } ?? 0,
            timestamp: timestamp ?? 0, meta: metaText.flatMap(Self.base64) ?? [], ephemeral: ephemeral
        )
    }

    /// Standard or URL-safe base64, padded or not.
    private static func base64(_ text: String) -> [UInt8]? {
        if let plain = Data(base64Encoded: text) { return Array(plain) }
        var normal = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while normal.utf8.count % 4 != 0 { normal += "=" }
        return Data(base64Encoded: normal).map { Array($0) }
    }

    private static func quoted(_ text: String) -> String {
        String(decoding: (try? JSONText.encode(.string(text))) ?? Array("\"\"".utf8), as: UTF8.self)
    }
}
