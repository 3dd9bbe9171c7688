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

    /// A notification whose front end stated no priority is stored without one and read back without one.
    @Test func anUnstatedPriorityRoundTrips() throws {
        let notification = PushNotification(kind: .alert, payload: ["data": ["k": "v"]])
        let bytes = try OutboxPayloadCoding.encode(notification)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("priority"))
        #expect(try OutboxPayloadCoding.decode(bytes) == notification)
        #expect(try OutboxPayloadCoding.decode(bytes).priority == nil)
        #expect(throws: (any Error).self) { try OutboxPayloadCoding.decode(Array(#"{"kind":"alert","priority":"urgent","payload":{}}"#.utf8)) }
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

    /// The direct writer and reader against `JSONEncoder`'s bytes and `JSONDecoder`: entries written by
    /// either decode with the other, whole numbers beyond a `Double`'s exact range included.
    @Test func theDirectCodingMatchesFoundationByteForByte() throws {
        var notifications = [
            PushNotification(payload: ["aps": ["alert": "hi ✓ \u{1F600}", "badge": 3], "u": "a/b"], apnsTopic: "im.example", expiration: 1_700_000_000),
            PushNotification(
                kind: .alert, priority: .normal, payload: ["aps": ["alert": ["title": "T", "body": "B"]], "n": 7], timeToLive: 30, collapseID: "room",
                webPushUrgency: .high, apnsTopic: "im.example", apnsPushType: "alert", apnsID: "123e4567-e89b-12d3-a456-426614174000", expiration: 1
            ),
            PushNotification(
                kind: .voip, priority: .normal, payload: ["x": [1.5, -2, true, .null]], timeToLive: 0, collapseID: "c", webPushUrgency: .veryLow,
                apnsTopic: "t", apnsPushType: "liveactivity", apnsID: "123e4567-e89b-12d3-a456-426614174000", expiration: -5
            ),
        ]
        // A smaller payload stated for a provider that refuses the full one as too large.
        notifications[1].reducedPayload = ["notification": ["event_id": "$e", "counts": ["unread": 2]]]
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for (index, notification) in notifications.enumerated() {
            let report = DeliveryReport(frontEnd: "gorush", context: ["n": "id", "p": 2])
            let direct = try OutboxPayloadCoding.encode(notification, report: report)
            // The same JSON object as the Codable form (Foundation escapes and orders it its own way).
            let viaFoundation = try JSONParser.parse(Array(foundation.encode(notification)))
            guard case .object(var members) = try JSONParser.parse(direct) else { Issue.record("not an object"); continue }
            // Members in sorted key order: the same bytes as writing the whole parsed object at once (the
            // last notification holds a fraction, which sends it through Codable).
            if index < 2 { #expect(direct == (try JSONText.encode(.object(members))), "\(index)") }
            #expect(members.removeValue(forKey: "report") == ["frontEnd": "gorush", "context": ["n": "id", "p": 2]])
            #expect(JSONValue.object(members) == viaFoundation)
            #expect(try JSONDecoder().decode(PushNotification.self, from: Data(direct)) == notification)
            #expect(try OutboxPayloadCoding.decodeWithReport(direct) == (notification, report))
            #expect(try OutboxPayloadCoding.decode(Array(foundation.encode(notification))) == notification)
        }
        // Beyond ±2^53 a Double is not exact: such an entry goes through Codable both ways.
        let huge = PushNotification(payload: [:], expiration: Int64.max - 1)
        let bytes = try OutboxPayloadCoding.encode(huge)
        #expect(String(decoding: bytes, as: UTF8.self).contains("\(Int64.max - 1)"))
        #expect(try OutboxPayloadCoding.decode(bytes) == huge)
        // Not a notification at all.
        #expect(throws: (any Error).self) { try OutboxPayloadCoding.decode(Array(#"{"kind":"alert"}"#.utf8)) }
        #expect(throws: (any Error).self) { try OutboxPayloadCoding.decode(Array(#"{"kind":"alert","priority":"high","payload":{},"timeToLive":1.5}"#.utf8)) }
    }
}
