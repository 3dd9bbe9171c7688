import Foundation
import PushgateStatusWire
import SwiftProtobuf

/// A Status message addressed to the server, opened: the ApplicationMetadataMessage's type and payload,
/// who signed it, and its Status message id.
struct StatusInboundMessage: Sendable {
    /// The AMM `type` (16 registration, 18 query, 20 push request, …).
    let type: Int
    /// The AMM `payload`.
    let payload: [UInt8]
    /// The key answers go to and registrations are keyed by: the AMM signer, else the Waku signer.
    let sender: Secp256k1.PublicKey
    /// Keccak-256(sender's 65-byte key ‖ AMM bytes), the id status-go gives the message.
    let messageID: [UInt8]
}

/// Opens what arrives on the server's topics: trial decryption with the key the content topic implies,
/// the version-1 frame (which must be signed), the ApplicationMetadataMessage and its signer. Anything
/// that fails is not for this server and is dropped without an answer.
enum StatusEnvelopeOpener {
    /// Why a message was dropped (for counters and debug logs; never the content).
    enum Drop: Error, Equatable {
        case undecryptable
        case unsigned
        case notAnApplicationMessage
        case segment
        case badSignature
    }

    /// How to decrypt the messages of one content topic.
    enum Key: Sendable {
        /// ECIES with the server's private key.
        case asymmetric(Secp256k1.PrivateKey)
        /// AES-256-GCM with a public topic's key (several when 4-byte topics collide).
        case symmetric([[UInt8]])
    }

    static func open(_ payload: [UInt8], key: Key) throws(Drop) -> StatusInboundMessage {
        let frame: [UInt8]
        switch key {
        case .asymmetric(let privateKey):
            guard let plain = try? ECIES.decrypt(payload, with: privateKey) else { throw .undecryptable }
            frame = plain
        case .symmetric(let keys):
            guard let plain = keys.lazy.compactMap({ try? WakuPayload.openSymmetric(payload, key: $0) }).first else { throw .undecryptable }
            frame = plain
        }
        guard let decoded = try? WakuPayload.decode(frame) else { throw .undecryptable }
        guard let wakuSigner = decoded.signer else { throw .unsigned }
        return try Self.application(decoded.data, wakuSigner: wakuSigner)
    }

    /// The AMM inside a frame's data.
    static func application(_ data: [UInt8], wakuSigner: Secp256k1.PublicKey) throws(Drop) -> StatusInboundMessage {
        guard let amm = try? Protobuf_ApplicationMetadataMessage(serializedBytes: data) else { throw .notAnApplicationMessage }
        // A SegmentMessage under status-go's 2025 rule has a 32-byte whole-message hash in field 1, where an
        // AMM has its 65-byte signature (or nothing): Pushgate never reassembles segments.
        if amm.signature.count == 32 { throw .segment }
        let sender: Secp256k1.PublicKey
        if amm.signature.isEmpty {
            sender = wakuSigner
        } else {
            guard let signer = try? Secp256k1.recover(signature65: Array(amm.signature), hash32: Keccak.keccak256(Array(amm.payload))) else {
                throw .badSignature
            }
            sender = signer
        }
        // The id's author is the AMM's signer only: an unsigned AMM's id is Keccak-256 of the AMM alone, as
        // status-go computes it, though its sender is the frame's signer.
        return StatusInboundMessage(
            type: amm.type.rawValue, payload: Array(amm.payload), sender: sender,
            messageID: StatusMessageID.compute(author: amm.signature.isEmpty ? nil : sender, data: data)
        )
    }
}
