import Foundation
import PushgateCore
@testable import PushgateDelivery
import Testing

/// The outbox keeps notifications across versions: what an earlier version stored must still decode.
@Suite("Outbox payload coding")
struct OutboxPayloadCodingTests {
    /// Entries as the version before `webPushUrgency` wrote them (`JSONEncoder`, nil fields left out).
    @Test func anEntryWrittenBeforeWebPushUrgencyExistedStillDecodes() throws {
        let full = #"{"kind":"alert","priority":"normal","payload":{"room_id":"!r:x","unread":2},"timeToLive":60,"collapseID":"wMM9sx0_4uCn3aAmE6newKcNvYOuTQ=="}"#
        let notification = try OutboxPayloadCoding.decode(Array(full.utf8))
        #expect(notification == PushNotification(
            kind: .alert, priority: .normal, payload: ["room_id": "!r:x", "unread": 2], timeToLive: 60, collapseID: "wMM9sx0_4uCn3aAmE6newKcNvYOuTQ=="
        ))
        #expect(notification.webPushUrgency == nil)
        #expect(notification.effectiveWebPushUrgency == .normal)

        let minimal = try OutboxPayloadCoding.decode(Array(#"{"kind":"background","priority":"normal","payload":{}}"#.utf8))
        #expect(minimal == PushNotification(kind: .background, priority: .normal, payload: [:]))
        #expect(minimal.effectiveWebPushUrgency == .low)
    }

    @Test func aStatedUrgencyRoundTrips() throws {
        let notification = PushNotification(kind: .alert, priority: .normal, payload: ["body": "hi"], collapseID: "room-1", webPushUrgency: .low)
        #expect(try OutboxPayloadCoding.decode(OutboxPayloadCoding.encode(notification)) == notification)
    }

    @Test func aReportRequestIsStoredBesideTheNotification() throws {
        let notification = PushNotification(payload: ["aps": [:]], apnsTopic: "im.example", expiration: 1_700_000_000)
        let report = DeliveryReport(frontEnd: "gorush", context: ["n": "id-1", "p": 1])
        let bytes = try OutboxPayloadCoding.encode(notification, report: report)
        #expect(try OutboxPayloadCoding.decode(bytes) == notification)
        #expect(OutboxPayloadCoding.report(bytes) == report)
        #expect(OutboxPayloadCoding.report(try OutboxPayloadCoding.encode(notification)) == nil)
        // An entry written before reports existed has none.
        #expect(OutboxPayloadCoding.report(Array(#"{"kind":"alert","priority":"high","payload":{}}"#.utf8)) == nil)
    }
}
