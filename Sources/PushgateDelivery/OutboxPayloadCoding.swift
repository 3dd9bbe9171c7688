import Foundation
import PushgateCore

/// How a ``PushNotification`` is stored in the outbox: the JSON object of its `Codable` form (its
/// property names as keys, nil fields left out), with the front end's ``DeliveryReport`` request (if any)
/// as one more top-level key, `report`. An entry written before reports existed decodes with none; an
/// older version reading a newer entry ignores the key.
///
/// The text is written by ``JSONText`` and read by ``JSONParser`` rather than through `JSONEncoder` and
/// `JSONDecoder`: every queued token is encoded once and decoded once, and `Codable` was a seventh of the
/// gateway's CPU for one-token gorush requests. The bytes are the same as `JSONEncoder` writes with sorted
/// keys, so entries written by either path decode with the other; the rare entry the direct path does not
/// take (a whole number beyond ±2⁵³, which a `Double` cannot hold) goes through `Codable` as before.
enum OutboxPayloadCoding {
    /// An entry that is not a stored notification.
    struct Unreadable: Error, CustomStringConvertible {
        let reason: String
        var description: String { "unreadable outbox entry: \(self.reason)" }
    }

    static func encode(_ notification: PushNotification, report: DeliveryReport? = nil) throws -> [UInt8] {
        if let bytes = try? Self.encodeDirectly(notification, report: report) { return bytes }
        return Array(try JSONEncoder().encode(Stored(notification: notification, report: report)))
    }

    /// The members written in sorted key order, as `JSONEncoder` sorts them, without a dictionary.
    private static func encodeDirectly(_ notification: PushNotification, report: DeliveryReport?) throws -> [UInt8] {
        var object = JSONText.ObjectWriter()
        if let apnsID = notification.apnsID { object.add("apnsID", apnsID) }
        if let pushType = notification.apnsPushType { object.add("apnsPushType", pushType) }
        if let topic = notification.apnsTopic { object.add("apnsTopic", topic) }
        if let collapseID = notification.collapseID { object.add("collapseID", collapseID) }
        if let expiration = notification.expiration { object.add("expiration", try Self.integer(expiration)) }
        object.add("kind", notification.kind.rawValue)
        if let text = notification.givenPayloadText {
            object.add("payload", jsonText: text)
        } else {
            object.add("payload", notification.payload)
        }
        if let priority = notification.priority { object.add("priority", priority.rawValue) }
        if let reduced = notification.reducedPayload { object.add("reducedPayload", reduced) }
        if let report { object.add("report", .object(["context": report.context, "frontEnd": .string(report.frontEnd)])) }
        if let timeToLive = notification.timeToLive { object.add("timeToLive", try Self.integer(Int64(timeToLive))) }
        if let urgency = notification.webPushUrgency { object.add("webPushUrgency", urgency.rawValue) }
        guard object.isExact else { throw Unreadable(reason: "a value only JSONEncoder writes exactly") }
        return object.finish()
    }

    static func decode(_ bytes: [UInt8]) throws -> PushNotification {
        try Self.decodeWithReport(bytes).0
    }

    /// The notification and the report request stored with it (nil when none was), from one parse.
    static func decodeWithReport(_ bytes: [UInt8]) throws -> (PushNotification, DeliveryReport?) {
        if let members = try? Self.members(bytes), let notification = try? Self.decode(members) {
            return (notification, Self.report(members))
        }
        let data = Data(bytes)
        return (try JSONDecoder().decode(PushNotification.self, from: data), (try? JSONDecoder().decode(ReportOnly.self, from: data))?.report)
    }

    /// The report request stored with a notification, if any.
    static func report(_ bytes: [UInt8]) -> DeliveryReport? {
        (try? Self.decodeWithReport(bytes))?.1
    }

    private static func members(_ bytes: [UInt8]) throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONParser.parse(bytes) else { throw Unreadable(reason: "not a JSON object") }
        return members
    }

    private static func decode(_ members: [String: JSONValue]) throws -> PushNotification {
        guard let kind = members["kind"]?.stringValue.flatMap(PushKind.init(rawValue:)) else { throw Unreadable(reason: "kind") }
        var priority: PushPriority?
        if let text = try Self.string(members, "priority") {
            guard let value = PushPriority(rawValue: text) else { throw Unreadable(reason: "priority") }
            priority = value
        }
        guard let payload = members["payload"] else { throw Unreadable(reason: "payload") }
        var urgency: WebPushUrgency?
        if let text = try Self.string(members, "webPushUrgency") {
            guard let value = WebPushUrgency(rawValue: text) else { throw Unreadable(reason: "webPushUrgency") }
            urgency = value
        }
        var notification = PushNotification(
            kind: kind, priority: priority, payload: payload, timeToLive: try Self.integer(members, "timeToLive").map(Int.init),
            collapseID: try Self.string(members, "collapseID"), webPushUrgency: urgency, apnsTopic: try Self.string(members, "apnsTopic"),
            apnsPushType: try Self.string(members, "apnsPushType"), apnsID: try Self.string(members, "apnsID"),
            expiration: try Self.integer(members, "expiration")
        )
        if let reduced = members["reducedPayload"], reduced != .null { notification.reducedPayload = reduced }
        return notification
    }

    private static func report(_ members: [String: JSONValue]) -> DeliveryReport? {
        guard case .object(let report)? = members["report"], let frontEnd = report["frontEnd"]?.stringValue, let context = report["context"] else {
            return nil
        }
        return DeliveryReport(frontEnd: frontEnd, context: context)
    }

    /// An optional string member: absent or null is nil, another type is unreadable.
    private static func string(_ members: [String: JSONValue], _ key: String) throws -> String? {
        switch members[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw Unreadable(reason: key)
        }
    }

    /// An optional whole-number member: absent or null is nil; a fraction or a number beyond ±2⁵³ is unreadable.
    private static func integer(_ members: [String: JSONValue], _ key: String) throws -> Int64? {
        switch members[key] {
        case nil, .null?: return nil
        case .number(let value)? where value.rounded() == value && abs(value) <= 9_007_199_254_740_992: return Int64(value)
        default: throw Unreadable(reason: key)
        }
    }

    /// A whole number as JSON stores it exactly (a `Double` holds every integer up to ±2⁵³).
    private static func integer(_ value: Int64) throws -> JSONValue {
        guard value.magnitude <= 9_007_199_254_740_992 else { throw Unreadable(reason: "a number beyond ±2^53") }
        return .number(Double(value))
    }

    private enum Key: String, CodingKey {
        case report
    }

    /// The `Codable` form: the notification's own keys plus `report`.
    private struct Stored: Encodable {
        let notification: PushNotification
        let report: DeliveryReport?

        func encode(to encoder: any Encoder) throws {
            try self.notification.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encodeIfPresent(self.report, forKey: .report)
        }
    }

    private struct ReportOnly: Decodable {
        let report: DeliveryReport?
    }
}
