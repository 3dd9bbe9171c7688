import Crypto

/// The 14/WAKU2-MESSAGE deterministic hash, a Waku message's identity on the network (go-waku
/// `WakuMessage.Hash`, nwaku `computeMessageHash`).
public enum WakuMessageHash {
    /// SHA-256(pubsub topic ‖ payload ‖ content topic ‖ meta ‖ timestamp as 8 bytes big-endian), the topics
    /// as UTF-8.
    public static func compute(pubsubTopic: String, payload: [UInt8], contentTopic: String, meta: [UInt8], timestampNanoseconds: Int64) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: Array(pubsubTopic.utf8))
        hasher.update(data: payload)
        hasher.update(data: Array(contentTopic.utf8))
        hasher.update(data: meta)
        let timestamp = UInt64(bitPattern: timestampNanoseconds)
        hasher.update(data: (0..<8).map { UInt8(truncatingIfNeeded: timestamp >> (56 - 8 * $0)) })
        return Array(hasher.finalize())
    }
}
