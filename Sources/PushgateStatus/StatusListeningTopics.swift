import PushgateStatusWire
import Synchronization

/// The content topics the server listens on and how to open each: its personal and partitioned topics
/// (ECIES with its key) and one query topic per registered key (AES-GCM with a key derived from the topic
/// name). Query keys cost tens of milliseconds each (PBKDF2, 65,356 rounds), so they are derived when the
/// first message arrives on their topic, not when the topic is added.
final class StatusListeningTopics: Sendable {
    private let identity: StatusServerIdentity
    private struct State {
        /// Content topic → the key hashes whose query topic it is (several when 4-byte topics collide).
        var queryTopics: [String: Set<[UInt8]>] = [:]
        /// Key hash → its derived symmetric key.
        var symmetricKeys: [[UInt8]: [UInt8]] = [:]
    }
    private let state = Mutex(State())

    init(identity: StatusServerIdentity) {
        self.identity = identity
    }

    /// Listens on the query topic of a registered key (given as its SHAKE-256 hash).
    func addQueryTopic(keyHash: [UInt8]) {
        let contentTopic = StatusTopic.contentTopic(forName: StatusTopic.queryName(forKeyHash: keyHash))
        self.state.withLock { _ = $0.queryTopics[contentTopic, default: []].insert(keyHash) }
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
