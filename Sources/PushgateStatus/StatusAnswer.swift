import Foundation
import PushgateStatusWire
import SwiftProtobuf

/// Wraps a response the way clients accept it: an ApplicationMetadataMessage signed by the server's
/// identity over its payload, in a version-1 frame signed by the same identity, ECIES-encrypted to the
/// recipient (the request's AMM signer) and published on the recipient's partitioned topic with
/// `version: 1`, a nanosecond timestamp and `ephemeral: false`.
struct StatusAnswer: Sendable {
    let identity: StatusServerIdentity

    /// AMM types of the three answers.
    enum Kind: Int {
        case registrationResponse = 17
        case queryResponse = 19
        case pushResponse = 21
    }

    func message(_ response: some SwiftProtobuf.Message, kind: Kind, to recipient: Secp256k1.PublicKey, nowNanoseconds: Int64) throws -> WakuMessage {
        let payload: [UInt8] = try response.serializedBytes()
        var amm = Protobuf_ApplicationMetadataMessage()
        amm.signature = Data(self.identity.privateKey.signRecoverable(hash32: Keccak.keccak256(payload)))
        amm.payload = Data(payload)
        amm.type = Protobuf_ApplicationMetadataMessage.TypeEnum(rawValue: kind.rawValue) ?? .unknown
        let data: [UInt8] = try amm.serializedBytes()
        let frame = WakuPayload.encode(data: data, signer: self.identity.privateKey)
        let sealed = try ECIES.encrypt(frame, to: recipient)
        return WakuMessage(
            payload: sealed, contentTopic: StatusTopic.contentTopic(forName: StatusTopic.partitionedName(for: recipient)), version: 1,
            timestamp: nowNanoseconds, meta: [], ephemeral: false
        )
    }
}
