/// What the Status server needs from a Waku node: relay subscription, polling and publishing on a pubsub
/// topic, and the node's health. Implemented over the Waku REST API; every call has a deadline.
public protocol WakuRelay: Sendable {
    /// Subscribes the node to `pubsubTopic` (a no-op when it already is).
    func subscribe(pubsubTopic: String) async throws(WakuRelayError)
    /// The messages the node received on `pubsubTopic` since the last poll (the node forgets them).
    func poll(pubsubTopic: String) async throws(WakuRelayError) -> [WakuMessage]
    /// Publishes a message on `pubsubTopic`.
    func publish(_ message: WakuMessage, pubsubTopic: String) async throws(WakuRelayError)
}

/// Why a Waku REST call failed.
public enum WakuRelayError: Error, Equatable, CustomStringConvertible {
    /// The node is still starting (nwaku answers 404 on relay paths then); try again.
    case initializing
    /// The node is not subscribed to the topic.
    case notSubscribed
    /// The node refused the request (status and the node's text).
    case refused(status: Int, reason: String)
    /// The node could not be reached or did not answer in time.
    case unreachable(String)
    /// The node's answer could not be read.
    case malformedAnswer(String)
    /// The node has no store peer to ask (nwaku answers 412 to a store query then).
    case noStorePeer(String)

    public var description: String {
        switch self {
        case .initializing: "the Waku node is still initializing"
        case .notSubscribed: "the Waku node is not subscribed to the pubsub topic"
        case .refused(let status, let reason): "the Waku node answered \(status): \(reason)"
        case .unreachable(let reason): "the Waku node cannot be reached: \(reason)"
        case .malformedAnswer(let reason): "the Waku node's answer cannot be read: \(reason)"
        case .noStorePeer(let reason): "the Waku node has no store peer: \(reason)"
        }
    }
}
