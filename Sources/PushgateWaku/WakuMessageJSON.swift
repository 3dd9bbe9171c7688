import Foundation
import PushgateCore
import PushgateStatusWire

/// The Waku REST API's message JSON: nwaku's shape (`payload` and `meta` standard base64 with padding,
/// `timestamp` in nanoseconds), read leniently as go-waku writes it too (URL-safe or unpadded base64,
/// `version`/`timestamp` absent, `ephemeral` null).
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

    /// The messages of a poll's answer (a JSON array). Entries that cannot be read are skipped: one bad
    /// message must not stop the others.
    static func messages(from body: [UInt8]) throws(WakuRelayError) -> [WakuMessage] {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(body), options: [])
        } catch {
            throw .malformedAnswer("not JSON")
        }
        guard let items = root as? [Any] else { throw .malformedAnswer("not a JSON array") }
        return items.compactMap { item in
            guard let object = item as? [String: Any] else { return nil }
            return Self.message(object)
        }
    }

    static func message(_ object: [String: Any]) -> WakuMessage? {
        guard let payloadText = object["payload"] as? String, let payload = Self.base64(payloadText),
            let contentTopic = object["contentTopic"] as? String, !contentTopic.isEmpty
        else { return nil }
        let meta = (object["meta"] as? String).flatMap(Self.base64) ?? []
        return WakuMessage(
            payload: payload, contentTopic: contentTopic, version: Self.integer(object["version"]).map { Int(truncatingIfNeeded: $0) } ?? 0,
            timestamp: Self.integer(object["timestamp"]) ?? 0, meta: meta, ephemeral: (object["ephemeral"] as? Bool) ?? false
        )
    }

    /// An integer JSON number, exactly (nanosecond timestamps do not fit a Double).
    private static func integer(_ value: Any?) -> Int64? {
        switch value {
        case let number as Int: return Int64(number)
        case let number as Int64: return number
        case let number as NSNumber: return number.int64Value
        default: return nil
        }
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
