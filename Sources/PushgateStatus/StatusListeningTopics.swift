import PushgateStatusWire
import Synchronization

/// The content topics the server listens on and how to open each: its personal and partitioned topics
/// (ECIES with its key) and one query topic per registered key (AES-GCM with a key derived from the topic
/// name). Query keys cost tens of milliseconds each (PBKDF2, 65,356 rounds), so they are derived when the
/// first message arrives on their topic, not when the topic is added. The query topics follow the store:
/// a refresh (``beginRefresh()``, then ``finishRefresh(_:registered:)``) drops the topics of keys that are
/// no longer registered, here or by another instance on the same database.
final class StatusListeningTopics: Sendable {
    private let identity: StatusServerIdentity
    private struct State {
        /// Content topic → the key hashes whose query topic it is (several when 4-byte topics collide).
        var queryTopics: [String: Set<[UInt8]>] = [:]
        /// Key hash → its derived symmetric key.
        var symmetricKeys: [[UInt8]: [UInt8]] = [:]
        /// Counts refreshes begun; a key added during a refresh is kept by it whatever the store said.
        var refresh: UInt64 = 0
        /// Key hash → the refresh under way when it was last added.
        var addedDuring: [[UInt8]: UInt64] = [:]
    }
    private let state = Mutex(State())

    init(identity: StatusServerIdentity) {
        self.identity = identity
    }

    /// Listens on the query topic of a registered key (given as its SHAKE-256 hash).
    func addQueryTopic(keyHash: [UInt8]) {
        let contentTopic = StatusTopic.contentTopic(forName: StatusTopic.queryName(forKeyHash: keyHash))
        self.state.withLock {
            _ = $0.queryTopics[contentTopic, default: []].insert(keyHash)
            $0.addedDuring[keyHash] = $0.refresh
        }
    }

    /// Starts a refresh: read the registered keys from the store after this call, then pass them to
    /// ``finishRefresh(_:registered:)`` with the value returned here.
    func beginRefresh() -> UInt64 {
        self.state.withLock {
            $0.refresh &+= 1
            return $0.refresh
        }
    }

    /// Listens on the query topics of exactly `registered` (key hashes read from the store after
    /// ``beginRefresh()`` returned `refresh`) and of the keys added since: a registration saved while the
    /// store was read keeps its topic. The other query topics, and their derived keys, are dropped.
    func finishRefresh(_ refresh: UInt64, registered: [[UInt8]]) {
        self.state.withLock { state in
            var kept = Set(registered)
            for (hash, added) in state.addedDuring where added >= refresh { kept.insert(hash) }
            state.addedDuring = state.addedDuring.filter { $0.value >= refresh }
            var queryTopics: [String: Set<[UInt8]>] = [:]
            for hash in kept {
                let contentTopic = StatusTopic.contentTopic(forName: StatusTopic.queryName(forKeyHash: hash))
                queryTopics[contentTopic, default: []].insert(hash)
            }
            state.queryTopics = queryTopics
            state.symmetricKeys = state.symmetricKeys.filter { kept.contains($0.key) }
        }
    }

    /// Every content topic listened on: the personal and partitioned topics, then the query topics in
    /// order (what the store is asked for).
    var contentTopics: [String] {
        let queryTopics = self.state.withLock { Array($0.queryTopics.keys) }.sorted()
        return [self.identity.personalContentTopic, self.identity.partitionedContentTopic] + queryTopics
    }

    /// How many query topics are listened on.
    var queryTopicCount: Int { self.state.withLock { $0.queryTopics.values.reduce(0) { $0 + $1.count } } }

    /// The key that opens messages on `contentTopic`; nil when the server does not listen there.
    func key(for contentTopic: String) -> StatusEnvelopeOpener.Key? {
        if contentTopic == self.identity.personalContentTopic || contentTopic == self.identity.partitionedContentTopic {
            return .asymmetric(self.identity.privateKey)
        }
        guard let hashes = self.state.withLock({ $0.queryTopics[contentTopic] }) else { return nil }
        var keys: [[UInt8]] = []
        for hash in hashes.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            if let known = self.state.withLock({ $0.symmetricKeys[hash] }) {
                keys.append(known)
            } else {
                let derived = StatusTopic.symmetricKey(forName: StatusTopic.queryName(forKeyHash: hash))
                self.state.withLock { $0.symmetricKeys[hash] = derived }
                keys.append(derived)
            }
        }
        return .symmetric(keys)
    }
}
