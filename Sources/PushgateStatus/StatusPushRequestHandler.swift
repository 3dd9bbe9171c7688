import Foundation
import Logging
import PushgateCore
import PushgateStatusWire
import PushgateStore
import SwiftProtobuf

/// Takes a PushNotificationRequest (AMM type 20) as status-go does: at most once per message id, one
/// report per notification (`NOT_REGISTERED`, `WRONG_TOKEN`, `UNKNOWN_ERROR_TYPE` on a store failure,
/// success — also, for privacy, when the registrant's block, mute or mention settings filter it out),
/// no report for a notification type it does not know, and no answer at all for a repeat, an empty request
/// or one without a `message_id`. Accepted notifications are queued durably before the answer.
struct StatusPushRequestHandler: Sendable {
    let store: any StatusServerStore
    let delivery: any StatusNotificationSink
    let logger: Logger
    /// The most notifications one request may carry (status-go sets no bound).
    let maximumNotifications = 1_000
    /// The pauses between repeated writes of the request's seen mark (``StatusSeenMarker``).
    var seenMarkPauses = StatusSeenMarker.defaultPauses

    /// The answer and the number of notifications queued; nil when no answer is due.
    func handle(_ message: StatusInboundMessage) async -> (Protobuf_PushNotificationResponse, queued: Int)? {
        guard let request = try? Protobuf_PushNotificationRequest(serializedBytes: message.payload) else { return nil }
        guard !request.requests.isEmpty, !request.messageID.isEmpty else { return nil }
        do {
            guard try await StatusSeenMarker(store: self.store, pauses: self.seenMarkPauses).mark(StatusSeenID.messageID(message.messageID)) else {
                return nil
            }
        } catch {
            self.logger.errorUnlessStopping("status: cannot record a push request as seen; not answered", error: error)
            return nil
        }
        // Marked seen, the request is never handled again (the store backfill after a restart skips it):
        // it is handled to the end even when a graceful stop cancels the caller, so what it accepted is
        // queued. Each store call and the queueing have their own deadlines.
        return await Task { await self.answer(request) }.value
    }

    /// Reads the registrations the request names, reports on each notification and queues the accepted
    /// ones; the answer and how many were queued.
    private func answer(_ request: Protobuf_PushNotificationRequest) async -> (Protobuf_PushNotificationResponse, queued: Int)? {
        let notifications = request.requests.prefix(self.maximumNotifications)
        var registrations: [[UInt8]: [StatusRegistrationRecord]]?
        do {
            let hashes = Array(Set(notifications.map { Array($0.publicKey) }))
            registrations = Dictionary(grouping: try await self.store.statusRegistrations(publicKeyHashes: hashes), by: \.publicKeyHash)
        } catch {
            self.logger.errorUnlessStopping("status: cannot read registrations for a push request", error: error)
        }
        var response = Protobuf_PushNotificationResponse()
        response.messageID = request.messageID
        var accepted: [StatusAccepted] = []
        for notification in notifications {
            var report = Protobuf_PushNotificationReport()
            report.publicKey = notification.publicKey
            report.installationID = notification.installationID
            guard let registrations else {
                report.error = .unknownErrorType
                response.reports.append(report)
                continue
            }
            guard Self.knownTypes.contains(notification.type) else { continue }
            guard let record = registrations[Array(notification.publicKey)]?.first(where: { $0.installationID == notification.installationID }),
                let bytes = record.registration, let registration = try? Protobuf_PushNotificationRegistration(serializedBytes: bytes)
            else {
                report.error = .notRegistered
                response.reports.append(report)
                continue
            }
            guard Self.constantTimeEqual(Array(registration.accessToken.utf8), Array(notification.accessToken.utf8)) else {
                report.error = .wrongToken
                response.reports.append(report)
                continue
            }
            guard self.delivery.serves(registration) else {
                // Registered while an app served its token type; none does now.
                self.logger.warning("status: no app delivers to this registration's token type; reported as an internal error")
                report.error = .internalError
                response.reports.append(report)
                continue
            }
            report.success = true
            response.reports.append(report)
            if Self.isWanted(notification, by: registration) {
                accepted.append(
                    StatusAccepted(
                        item: StatusGorushRequest.Item(notification: notification, registration: registration), keyHash: record.publicKeyHash,
                        installationID: record.installationID, version: record.version
                    )
                )
            }
        }
        do {
            try await self.delivery.deliver(accepted)
        } catch {
            // Nothing was queued: mark the accepted ones as failed rather than claim a delivery.
            self.logger.errorUnlessStopping("status: cannot queue notifications", error: error)
            for index in response.reports.indices where response.reports[index].success {
                response.reports[index].success = false
                response.reports[index].error = .internalError
            }
            return (response, 0)
        }
        return (response, accepted.count)
    }

    static let knownTypes: Set<Protobuf_PushNotification.PushNotificationType> = [.message, .mention, .requestToJoinCommunity, .contactRequest]

    /// Whether the registrant's settings let the notification through (lists compared byte for byte).
    static func isWanted(_ notification: Protobuf_PushNotification, by registration: Protobuf_PushNotificationRegistration) -> Bool {
        let blocked = Set(registration.blockedChatList)
        let authorBlocked = blocked.contains(notification.author)
        switch notification.type {
        case .message:
            return !blocked.contains(notification.chatID) && !registration.mutedChatList.contains(notification.chatID) && !authorBlocked
        case .mention:
            return !registration.blockMentions && registration.allowedMentionsChatList.contains(notification.chatID) && !authorBlocked
        default:
            return !authorBlocked
        }
    }

    private static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}

/// Where accepted notifications go (the outbox, through ``StatusDelivery``).
protocol StatusNotificationSink: Sendable {
    /// Queues the notifications. - Throws: when nothing could be queued.
    func deliver(_ accepted: [StatusAccepted]) async throws
    /// Whether a registration's notifications have an app to go through.
    func serves(_ registration: Protobuf_PushNotificationRegistration) -> Bool
}

