/// What the Status server needs from a Waku node's store (13/WAKU2-STORE v3, through the node's REST API):
/// the messages a store peer kept on some content topics over a time range, a page at a time, so that
/// what the relay cache dropped before it was polled can be caught up. Every call has a deadline.
public protocol WakuStore: Sendable {
    /// One page of stored messages matching `query`, oldest first.
    /// - Throws: ``WakuRelayError/noStorePeer(_:)`` when the node knows no store peer (nwaku's 412).
    func queryStore(_ query: WakuStoreQuery) async throws(WakuRelayError) -> WakuStorePage
}

/// One store request: a pubsub topic, at most ``maximumContentTopics`` content topics, a time range of
/// message timestamps (nanoseconds, both ends included) and where the previous page ended.
public struct WakuStoreQuery: Sendable, Equatable {
    /// The most content topics one query may name (nwaku's archive refuses more).
    public static let maximumContentTopics = 10
    /// The largest page a store peer serves (nwaku's limit; its default is 20).
    public static let maximumPageSize = 100

    /// The pubsub topic (shard).
    public var pubsubTopic: String
    /// The content topics, at most ``maximumContentTopics``.
    public var contentTopics: [String]
    /// The earliest message timestamp wanted, in nanoseconds since 1970.
    public var startTime: Int64
    /// The latest message timestamp wanted, in nanoseconds since 1970.
    public var endTime: Int64
    /// The previous page's `paginationCursor`; nil for the first page.
    public var cursor: String?
    /// The page size, at most ``maximumPageSize``.
    public var pageSize: Int

    /// Creates a query for the first page.
    public init(pubsubTopic: String, contentTopics: [String], startTime: Int64, endTime: Int64, cursor: String? = nil, pageSize: Int = Self.maximumPageSize) {
        self.pubsubTopic = pubsubTopic
        self.contentTopics = contentTopics
        self.startTime = startTime
        self.endTime = endTime
        self.cursor = cursor
        self.pageSize = pageSize
    }
}

/// One page of a store's answer.
public struct WakuStorePage: Sendable, Equatable {
    /// The messages, oldest first.
    public var messages: [WakuMessage]
    /// Where the next page starts; nil on the last page.
    public var cursor: String?

    /// Creates a page.
    public init(messages: [WakuMessage], cursor: String?) {
        self.messages = messages
        self.cursor = cursor
    }
}
