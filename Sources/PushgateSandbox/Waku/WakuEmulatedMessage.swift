import Crypto
import Foundation
import PushgateCore

/// A message on the emulated Waku relay network, as a node's REST API carries it.
public struct WakuEmulatedMessage: Sendable, Equatable {
    /// The pubsub topic it was published on.
    public var pubsubTopic: String
    /// The payload bytes.
    public var payload: [UInt8]
    /// The content topic.
    public var contentTopic: String
    /// The version label (0 when the publisher left it out).
    public var version: Int
    /// Nanoseconds since 1970.
    public var timestamp: Int64
    /// Metadata, empty when absent.
    public var meta: [UInt8]
    /// Whether store nodes may skip it.
    public var ephemeral: Bool

    /// Creates a message.
    public init(pubsubTopic: String, payload: [UInt8], contentTopic: String, version: Int, timestamp: Int64, meta: [UInt8] = [], ephemeral: Bool = false) {
        self.pubsubTopic = pubsubTopic
        self.payload = payload
        self.contentTopic = contentTopic
        self.version = version
        self.timestamp = timestamp
        self.meta = meta
        self.ephemeral = ephemeral
    }

    /// The 14/WAKU2-MESSAGE deterministic hash: SHA-256 of pubsub topic ‖ payload ‖ content topic ‖ meta ‖
    /// timestamp (8 bytes, big-endian).
    public var hash: [UInt8] {
        var hasher = SHA256()
        hasher.update(data: Array(self.pubsubTopic.utf8))
        hasher.update(data: self.payload)
        hasher.update(data: Array(self.contentTopic.utf8))
        hasher.update(data: self.meta)
        let timestamp = UInt64(bitPattern: self.timestamp)
        hasher.update(data: (0..<8).map { UInt8(truncatingIfNeeded: timestamp >> (56 - 8 * $0)) })
        return Array(hasher.finalize())
    }

    /// The JSON object nwaku writes on a poll, keys in its order: payload, contentTopic, version,
    /// timestamp, meta (only when non-empty), ephemeral, proof.
    var restJSON: String {
        var text = "{\"payload\":\"" + Data(self.payload).base64EncodedString() + "\""
        text += ",\"contentTopic\":" + WakuEmulatedMessage.quoted(self.contentTopic)
        text += ",\"version\":\(self.version),\"timestamp\":\(self.timestamp)"
        if !self.meta.isEmpty { text += ",\"meta\":\"" + Data(self.meta).base64EncodedString() + "\"" }
        text += ",\"ephemeral\":\(self.ephemeral),\"proof\":\"\"}"
        return text
    }

    static func quoted(_ text: String) -> String {
        String(decoding: (try? JSONText.encode(.string(text))) ?? Array("\"\"".utf8), as: UTF8.self)
    }
}
