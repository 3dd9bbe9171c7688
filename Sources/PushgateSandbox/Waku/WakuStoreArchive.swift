import PushgateCore
import Synchronization

/// The emulated network's store: every message relayed (an identical one kept once, ephemeral ones not
/// at all, as nwaku's archive does), queried as 13/WAKU2-STORE v3 does: by pubsub topic, content topics
/// and a range of timestamps, ordered by timestamp then hash, a page at a time, the cursor being the hash
/// of the last message of the page before.
final class WakuStoreArchive: Sendable {
    private struct State {
        var messages: [WakuEmulatedMessage] = []
        var hashes: Set<HashedBytes> = []
    }
    private let state = Mutex(State())

    /// One query's answer: the page and the cursor of the next one (nil on the last page).
    struct Page {
        var messages: [(hash: [UInt8], message: WakuEmulatedMessage)]
        var cursor: [UInt8]?
    }

    /// Keeps `message` unless it is ephemeral or already kept.
    func keep(_ message: WakuEmulatedMessage) {
        guard !message.ephemeral else { return }
        self.state.withLock { state in
            guard state.hashes.insert(HashedBytes(message.hash)).inserted else { return }
            state.messages.append(message)
        }
    }

    /// The page after `cursor` (or the first) of the messages matching the filters.
    func query(
        pubsubTopic: String?, contentTopics: Set<String>, startTime: Int64?, endTime: Int64?, cursor: [UInt8]?, ascending: Bool, pageSize: Int
    ) -> Page {
        var matching = self.state.withLock { $0.messages }.filter { message in
            (pubsubTopic.map { $0 == message.pubsubTopic } ?? true) && (contentTopics.isEmpty || contentTopics.contains(message.contentTopic))
                && (startTime.map { message.timestamp >= $0 } ?? true) && (endTime.map { message.timestamp <= $0 } ?? true)
        }.map { (hash: $0.hash, message: $0) }
        matching.sort { left, right in
            left.message.timestamp != right.message.timestamp
                ? left.message.timestamp < right.message.timestamp : left.hash.lexicographicallyPrecedes(right.hash)
        }
        if !ascending { matching.reverse() }
        var start = 0
        if let cursor, let index = matching.firstIndex(where: { $0.hash == cursor }) { start = index + 1 }
        let page = Array(matching[start..<min(matching.count, start + pageSize)])
        let more = start + pageSize < matching.count
        return Page(messages: page, cursor: more ? page.last?.hash : nil)
    }
}
