import Foundation
import PushgateCore

/// Why a notify request body is refused (400), with the message Sygnal gives for the same case.
public struct MatrixRequestError: Error, Equatable, Sendable {
    /// The explanation sent back.
    public let message: String
}

/// Reads and validates a notify request body, in Sygnal's order and with its messages.
public enum MatrixRequestParser {
    /// Parses `body`.
    /// - Throws: ``MatrixRequestError`` for each of Sygnal's 400 cases.
    public static func parse(_ body: [UInt8]) throws(MatrixRequestError) -> MatrixNotification {
        guard let root = try? JSONParser.parse(body) else {
            throw MatrixRequestError(message: "Expected JSON request body")
        }
        guard case .object(let notification)? = root["notification"] else {
            throw MatrixRequestError(message: "Invalid notification: expecting object in 'notification' key")
        }
        guard case .array(let rawDevices)? = notification["devices"] else {
            throw MatrixRequestError(message: "Expected list in 'devices' key")
        }
        var devices: [MatrixDevice] = []
        for raw in rawDevices {
            devices.append(try Self.device(raw))
        }
        var counts: [String: JSONValue] = [:]
        if let rawCounts = notification["counts"], rawCounts != .null {
            guard case .object(let object) = rawCounts else { throw MatrixRequestError(message: "counts is of invalid type") }
            counts = object
        }
        let unread = try Self.integer(counts["unread"], name: "unread")
        let missedCalls = try Self.integer(counts["missed_calls"], name: "missed_calls")
        guard !devices.isEmpty else { throw MatrixRequestError(message: "No devices in notification") }
        var content: [String: JSONValue]?
        if case .object(let object)? = notification["content"] { content = object }
        return MatrixNotification(
            eventID: notification["event_id"]?.stringValue,
            roomID: notification["room_id"]?.stringValue,
            type: notification["type"]?.stringValue,
            sender: notification["sender"]?.stringValue,
            senderDisplayName: notification["sender_display_name"]?.stringValue,
            roomName: notification["room_name"]?.stringValue,
            roomAlias: notification["room_alias"]?.stringValue,
            userIsTarget: { if case .bool(let value)? = notification["user_is_target"] { return value } else { return nil } }(),
            prio: notification["prio"]?.stringValue,
            content: content,
            membership: notification["membership"]?.stringValue ?? content?["membership"]?.stringValue,
            unread: unread,
            missedCalls: missedCalls,
            devices: devices
        )
    }

    private static func device(_ raw: JSONValue) throws(MatrixRequestError) -> MatrixDevice {
        guard let appID = raw["app_id"]?.stringValue else {
            throw MatrixRequestError(message: "Device with missing or non-string app_id")
        }
        guard let pushkey = raw["pushkey"]?.stringValue else {
            throw MatrixRequestError(message: "Device with missing or non-string pushkey")
        }
        let pushkeyTS = try Self.integer(raw["pushkey_ts"], name: "pushkey_ts")
        let data = try Self.object(raw["data"], name: "data")
        let tweaks = try Self.object(raw["tweaks"], name: "tweaks")
        if let sound = tweaks?["sound"], sound.stringValue == nil, sound != .null {
            throw MatrixRequestError(message: "sound is of invalid type")
        }
        return MatrixDevice(appID: appID, pushkey: pushkey, pushkeyTS: pushkeyTS, data: data, tweaks: tweaks)
    }

    private static func integer(_ value: JSONValue?, name: String) throws(MatrixRequestError) -> Int? {
        switch value {
        case nil, .null?: return nil
        case .number(let number)? where number.rounded() == number && abs(number) < 9.0e15: return Int(number)
        default: throw MatrixRequestError(message: "\(name) is of invalid type")
        }
    }

    private static func object(_ value: JSONValue?, name: String) throws(MatrixRequestError) -> [String: JSONValue]? {
        switch value {
        case nil, .null?: return nil
        case .object(let object)?: return object
        default: throw MatrixRequestError(message: "\(name) is of invalid type")
        }
    }
}
