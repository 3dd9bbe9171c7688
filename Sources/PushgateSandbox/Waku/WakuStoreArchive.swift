import PushgateCore
import Synchronization

/// The emulated network's store: every message relayed (an identical one kept once, ephemeral ones not
/// at all, as nwaku's archive does), queried as 13/WAKU2-STORE v3 does: by pubsub topic, content topics
/// and a range of timestamps, ordered by timestamp then hash, a page at a time, the cursor being the hash
/// of the last message of the page before.
///
/// The messages are kept in that order with their hashes, so a query finds where its range (or its
/// cursor) starts by binary search and reads on from there: a page costs about its own length, not the
/// archive's, as a real store's index makes it (a benchmark's archive holds hundreds of thousands).
final class WakuStoreArchive: Sendable {
    /// A kept message and its hash, the order's tie-breaker.
    private struct Entry {
        let hash: [UInt8]
        let message: WakuEmulatedMessage

        /// Whether this entry sorts before one with `timestamp` and `hash`.
        func precedes(timestamp: Int64, hash: [UInt8]) -> Bool {
            self.message.timestamp != timestamp ? self.message.timestamp < timestamp : self.hash.lexicographicallyPrecedes(hash)
        }
    }

    private struct State {
        /// Ordered by timestamp, then hash.
        var entries: [Entry] = []
        /// Each kept message's timestamp by hash: where a cursor points.
        var timestamps: [HashedBytes: Int64] = [:]

        /// The index of the first entry not before (`timestamp`, `hash`).
        func firstIndex(notBefore timestamp: Int64, hash: [UInt8]) -> Int {
            var low = 0
            var high = self.entries.count
            while low < high {
                let middle = (low + high) / 2
                if self.entries[middle].precedes(timestamp: timestamp, hash: hash) { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }
    private let state = Mutex(State())

    /// The lowest 32-byte hash, and a 33-byte value above every 32-byte hash (lexicographically): bounds of
    /// a timestamp's run of entries.
    private static let lowestHash = [UInt8](repeating: 0, count: 32)
    private static let aboveHighestHash = [UInt8](repeating: 0xff, count: 33)

    /// One query's answer: the page and the cursor of the next one (nil on the last page).
    struct Page {
        var messages: [(hash: [UInt8], message: WakuEmulatedMessage)]
        var cursor: [UInt8]?
    }

    /// Keeps `message`, whose 14/WAKU2 hash is `hash` (``WakuEmulatedMessage/hash`` when not given),
    /// unless it is ephemeral or already kept.
    func keep(_ message: WakuEmulatedMessage, hash given: [UInt8]? = nil) {
        guard !message.ephemeral else { return }
        let hash = given ?? message.hash
        self.state.withLock { state in
            guard state.timestamps.updateValue(message.timestamp, forKey: HashedBytes(hash)) == nil else { return }
            // Messages come in nearly in timestamp order: the place is almost always the end.
            let entry = Entry(hash: hash, message: message)
            if let last = state.entries.last, !last.precedes(timestamp: message.timestamp, hash: hash) {
                state.entries.insert(entry, at: state.firstIndex(notBefore: message.timestamp, hash: hash))
            } else {
                state.entries.append(entry)
            }
        }
    }

    /// The page after `cursor` (or the first) of the messages matching the filters.
    func query(
        pubsubTopic: String?, contentTopics: Set<String>, startTime: Int64?, endTime: Int64?, cursor: [UInt8]?, ascending: Bool, pageSize: Int
    ) -> Page {
        func matches(_ entry: Entry) -> Bool {
            (pubsubTopic.map { $0 == entry.message.pubsubTopic } ?? true) && (contentTopics.isEmpty || contentTopics.contains(entry.message.contentTopic))
        }
        return self.state.withLock { state in
            // Where to start reading, then which way: after the cursor's message, or at the range's first end.
            let step = ascending ? 1 : -1
            var index: Int
            if let cursor, let cursorTimestamp = state.timestamps[HashedBytes(cursor)] {
                index = state.firstIndex(notBefore: cursorTimestamp, hash: cursor) + step
            } else if ascending {
                index = startTime.map { state.firstIndex(notBefore: $0, hash: Self.lowestHash) } ?? 0
            } else {
                index = (endTime.map { state.firstIndex(notBefore: $0, hash: Self.aboveHighestHash) } ?? state.entries.count) - 1
            }
            var page: [(hash: [UInt8], message: WakuEmulatedMessage)] = []
            var more = false
            while state.entries.indices.contains(index) {
                let entry = state.entries[index]
                index += step
                let before = startTime.map { entry.message.timestamp < $0 } ?? false
                let after = endTime.map { entry.message.timestamp > $0 } ?? false
                if ascending ? after : before { break }
                guard !before, !after, matches(entry) else { continue }
                if page.count == pageSize {
                    more = true
                    break
                }
                page.append((entry.hash, entry.message))
            }
            return Page(messages: page, cursor: more ? page.last?.hash : nil)
        }
    }
}
