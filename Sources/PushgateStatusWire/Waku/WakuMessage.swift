/// A Waku message (14/WAKU2-MESSAGE) as a node's REST API carries it.
public struct WakuMessage: Sendable, Equatable {
    /// The payload; for Status, a version-1 payload (26/WAKU2-PAYLOAD).
    public var payload: [UInt8]
    /// The content topic (`/waku/1/0x…/rfc26` for Status).
    public var contentTopic: String
    /// The version label: 1 for an encrypted payload (receivers decrypt whatever the label says).
    public var version: Int
    /// Nanoseconds since 1970.
    public var timestamp: Int64
    /// Optional metadata, empty when absent.
    public var meta: [UInt8]
    /// Whether store nodes may skip it.
    public var ephemeral: Bool

    /// Creates a message.
    public init(payload: [UInt8], contentTopic: String, version: Int = 1, timestamp: Int64, meta: [UInt8] = [], ephemeral: Bool = false) {
        self.payload = payload
        self.contentTopic = contentTopic
        self.version = version
        self.timestamp = timestamp
        self.meta = meta
        self.ephemeral = ephemeral
    }
}
