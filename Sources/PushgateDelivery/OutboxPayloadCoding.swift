import Foundation
import PushgateCore

/// How a ``PushNotification`` is stored in the outbox: its JSON encoding, with the front end's
/// ``DeliveryReport`` request (if any) as one more top-level key, `report`. An entry written before
/// reports existed decodes with none; an older version reading a newer entry ignores the key.
enum OutboxPayloadCoding {
    static func encode(_ notification: PushNotification, report: DeliveryReport? = nil) throws -> [UInt8] {
        Array(try JSONEncoder().encode(Stored(notification: notification, report: report)))
    }

    static func decode(_ bytes: [UInt8]) throws -> PushNotification {
        try JSONDecoder().decode(PushNotification.self, from: Data(bytes))
    }

    /// The report request stored with a notification, if any.
    static func report(_ bytes: [UInt8]) -> DeliveryReport? {
        (try? JSONDecoder().decode(ReportOnly.self, from: Data(bytes)))?.report
    }

    private enum Key: String, CodingKey {
        case report
    }

    /// The notification's own keys plus `report`.
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
