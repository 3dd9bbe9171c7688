import PushgateStatusWire
import PushgateCore

/// The server's secp256k1 identity and the topics it listens on because of it: its personal topic
/// (registrations) and its partitioned topic (push requests).
struct StatusServerIdentity: Sendable {
    let privateKey: Secp256k1.PrivateKey
    let publicKey: Secp256k1.PublicKey
    /// `/waku/1/0x…/rfc26` of `contact-discovery-<hex of the 65-byte key>`.
    let personalContentTopic: String
    /// `/waku/1/0x…/rfc26` of `contact-discovery-<X mod 5000>`.
    let partitionedContentTopic: String

    init(privateKey: Secp256k1.PrivateKey) {
        self.privateKey = privateKey
        self.publicKey = privateKey.publicKey
        self.personalContentTopic = StatusTopic.contentTopic(forName: StatusTopic.personalName(for: self.publicKey))
        self.partitionedContentTopic = StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: self.publicKey))
    }

    /// The compressed public key as lowercase hex with `0x`, as operators configure clients with it.
    var publicKeyHex: String { "0x" + Hex.lowercase(self.publicKey.compressed) }
}
