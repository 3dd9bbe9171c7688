import Foundation
import PushgateCore

/// How a ``PushNotification`` is stored in the outbox: its JSON encoding.
enum OutboxPayloadCoding {
    static func encode(_ notification: PushNotification) throws -> [UInt8] {
        Array(try JSONEncoder().encode(notification))
    }

    static func decode(_ bytes: [UInt8]) throws -> PushNotification {
        try JSONDecoder().decode(PushNotification.self, from: Data(bytes))
    }
}
