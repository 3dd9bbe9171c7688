import Foundation
public import Logging
import Synchronization

/// An in-memory Waku relay network for the sandbox and the tests: several REST nodes (nwaku's relay and
/// store REST API), each with its own message cache, on one network with one store. A message published
/// through any node reaches every node subscribed to its pubsub topic, the publisher included (nwaku
/// relays its own messages to itself), and the store; a message identical to one relayed within the seen
/// window reaches no one again, as in Waku Relay.
public final class WakuNetworkEmulator: Sendable {
    /// How many messages a node's cache holds unless made with another capacity (nwaku's
    /// `--rest-relay-cache-capacity`, default 50).
    public let cacheCapacity: Int
    /// The largest message a node publishes (nwaku's `--max-msg-size`, default 150 KiB).
    public let maxMessageSize: Int
    let logger: Logger
    private let seen: WakuSeenCache
    private let nodes = Mutex<[WakuRESTNode]>([])
    private let log = Mutex<[WakuEmulatedMessage]>([])
    /// What store peers keep of the traffic.
    let archive = WakuStoreArchive()

    /// Creates an empty network.
    /// - Parameter seenWindow: how long an identical message is dropped after the network relayed it
    ///   (gossipsub's seen cache, about two minutes).
    public init(cacheCapacity: Int = 50, maxMessageSize: Int = 150 * 1024, seenWindow: Duration = .seconds(120), logger: Logger) {
        self.cacheCapacity = cacheCapacity
        self.seen = WakuSeenCache(window: seenWindow)
        self.maxMessageSize = maxMessageSize
        self.logger = logger
    }

    /// A new node on the network (serve it with ``WakuRESTNode/makeApplication(host:port:)``).
    /// - Parameters:
    ///   - initializingFor: how long after its creation the node answers relay paths as nwaku does while it
    ///     initialises.
    ///   - pollAnswerDelay: how long the node takes to answer a poll, after it took the messages from its
    ///     cache (a slow node, or one on a busy machine).
    ///   - cacheCapacity: this node's cache capacity; nil: the network's ``cacheCapacity``.
    ///   - hasStorePeer: whether the node can reach a store peer; without one it answers store queries 412.
    public func makeNode(
        name: String, initializingFor: Duration = .zero, pollAnswerDelay: Duration = .zero, cacheCapacity: Int? = nil, hasStorePeer: Bool = true
    ) -> WakuRESTNode {
        let node = WakuRESTNode(
            name: name, network: self, initializingFor: initializingFor, pollAnswerDelay: pollAnswerDelay, cacheCapacity: cacheCapacity ?? self.cacheCapacity,
            hasStorePeer: hasStorePeer
        )
        self.nodes.withLock { $0.append(node) }
        return node
    }

    /// Every message published on the network, oldest first (repeats included).
    public var published: [WakuEmulatedMessage] { self.log.withLock { $0 } }

    /// Relays a message to every subscribed node, as if it came from elsewhere on the network, unless the
    /// network relayed the same message within the seen window.
    public func inject(_ message: WakuEmulatedMessage) {
        self.inject(contentsOf: [message])
    }

    /// Relays messages as ``inject(_:)`` does, all at once: each node caches them together, so a burst
    /// overflows a small cache before any poll can read it, however busy the machine.
    public func inject(contentsOf messages: [WakuEmulatedMessage]) {
        self.log.withLock { $0.append(contentsOf: messages) }
        // Each message's hash once: the seen cache and the archive both key on it.
        let fresh = messages.map { (message: $0, hash: $0.hash) }.filter { self.seen.firstSight(of: $0.hash) }
        guard !fresh.isEmpty else { return }
        for entry in fresh { self.archive.keep(entry.message, hash: entry.hash) }
        for node in self.nodes.withLock({ $0 }) { node.receive(fresh.map(\.message)) }
    }
}
