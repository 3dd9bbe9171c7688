import Foundation
import Logging
import PushgateCore
import PushgateStatusWire
import PushgateStore
import SwiftProtobuf

/// Answers a PushNotificationQuery (AMM type 18): for each registration of the asked keys, the key hash,
/// installation id, version and grant, plus the access token, or the encrypted allowed-key list when the
/// registrant accepts notifications from contacts only. Anyone may ask (as in status-go); `success` is
/// true even when nothing matched, false for an empty query or a store failure.
struct StatusQueryHandler: Sendable {
    let store: any StatusServerStore
    let logger: Logger
    /// The most keys one query may ask for (status-go sets no bound).
    let maximumKeys = 1_000

    /// The answer; nil when the payload is not a query (status-go does not answer then).
    func handle(_ message: StatusInboundMessage) async -> Protobuf_PushNotificationQueryResponse? {
        guard let query = try? Protobuf_PushNotificationQuery(serializedBytes: message.payload) else { return nil }
        var response = Protobuf_PushNotificationQueryResponse()
        response.messageID = Data(message.messageID)
        let keys = query.publicKeys.prefix(self.maximumKeys).map { Array($0) }
        guard !keys.isEmpty else { return response }
        let records: [StatusRegistrationRecord]
        do {
            records = try await self.store.statusRegistrations(publicKeyHashes: keys)
        } catch {
            self.logger.errorUnlessStopping("status: cannot read registrations for a query", error: error)
            return response
        }
        response.success = true
        for record in records {
            guard let bytes = record.registration, let registration = try? Protobuf_PushNotificationRegistration(serializedBytes: bytes) else { continue }
            var info = Protobuf_PushNotificationQueryInfo()
            info.publicKey = Data(record.publicKeyHash)
            info.installationID = record.installationID
            info.version = record.version
            info.grant = registration.grant
            if registration.allowFromContactsOnly {
                info.allowedKeyList = registration.allowedKeyList
            } else {
                info.accessToken = registration.accessToken
            }
            response.info.append(info)
        }
        return response
    }
}
