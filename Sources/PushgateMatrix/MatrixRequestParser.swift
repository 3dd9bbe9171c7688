import Foundation
import PushgateCore

/// Why a notify request body is refused (400), with the message Sygnal gives for the same case.
public struct MatrixRequestError: Error, Equatable, Sendable {
    /// The explanation sent back.
    public let message: String
}

/// Reads and validates a notify request body, in Sygnal's order and with its messages.
///
/// The body is walked once: the members the gateway uses are read into their fields as they come, so only
/// the objects it passes on whole (`content`, a device's `data` and `tweaks`) become dictionaries. As when
/// reading the whole tree, of duplicate keys the last wins and any JSON error comes before every other.
public enum MatrixRequestParser {
    /// Parses `body`.
    /// - Throws: ``MatrixRequestError`` for each of Sygnal's 400 cases.
    public static func parse(_ body: [UInt8]) throws(MatrixRequestError) -> MatrixNotification {
        let root: RawRoot
        do {
            root = try JSONParser.walk(body) { parser throws(JSONParser.Failure) in try RawRoot(&parser) }
        } catch {
            throw MatrixRequestError(message: "Expected JSON request body")
        }
        guard let notification = root.notification else {
            throw MatrixRequestError(message: "Invalid notification: expecting object in 'notification' key")
        }
        guard let rawDevices = notification.devices else {
            throw MatrixRequestError(message: "Expected list in 'devices' key")
        }
        var devices: [MatrixDevice] = []
        devices.reserveCapacity(rawDevices.count)
        for raw in rawDevices {
            devices.append(try Self.device(raw))
        }
        guard !notification.countsAreInvalid else { throw MatrixRequestError(message: "counts is of invalid type") }
        let unread = try Self.integer(notification.unread, name: "unread")
        let missedCalls = try Self.integer(notification.missedCalls, name: "missed_calls")
        guard !devices.isEmpty else { throw MatrixRequestError(message: "No devices in notification") }
        return MatrixNotification(
            eventID: notification.eventID,
            roomID: notification.roomID,
            type: notification.type,
            sender: notification.sender,
            senderDisplayName: notification.senderDisplayName,
            roomName: notification.roomName,
            roomAlias: notification.roomAlias,
            userIsTarget: notification.userIsTarget,
            prio: notification.prio,
            content: notification.content,
            membership: notification.membership ?? notification.content?["membership"]?.stringValue,
            unread: unread,
            missedCalls: missedCalls,
            devices: devices
        )
    }

    private static func device(_ raw: RawDevice) throws(MatrixRequestError) -> MatrixDevice {
        guard let appID = raw.appID?.stringValue else {
            throw MatrixRequestError(message: "Device with missing or non-string app_id")
        }
        guard let pushkey = raw.pushkey?.stringValue else {
            throw MatrixRequestError(message: "Device with missing or non-string pushkey")
        }
        let pushkeyTS = try Self.integer(raw.pushkeyTS, name: "pushkey_ts")
        let data = try Self.object(raw.data, name: "data")
        let tweaks = try Self.object(raw.tweaks, name: "tweaks")
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

/// The top level of a notify body as read, before validation.
private struct RawRoot {
    /// The last `notification` member, when it was an object.
    var notification: RawNotification?

    init(_ parser: inout JSONParser) throws(JSONParser.Failure) {
        guard parser.nextKind == .object else {
            _ = try parser.readValue()
            return
        }
        var notification: RawNotification?
        try parser.readMembers { parser, key throws(JSONParser.Failure) in
            if key == "notification", parser.nextKind == .object {
                notification = try RawNotification(&parser)
            } else {
                if key == "notification" { notification = nil }
                _ = try parser.readValue()
            }
        }
        self.notification = notification
    }
}

/// The `notification` object as read: the members the gateway uses, unvalidated.
private struct RawNotification {
    var eventID: String?
    var roomID: String?
    var type: String?
    var sender: String?
    var senderDisplayName: String?
    var roomName: String?
    var roomAlias: String?
    var userIsTarget: Bool?
    var prio: String?
    var membership: String?
    var content: [String: JSONValue]?
    /// Each device, when `devices` was a list.
    var devices: [RawDevice]?
    /// Whether `counts` was there, not null and not an object.
    var countsAreInvalid = false
    var unread: JSONValue?
    var missedCalls: JSONValue?

    init(_ parser: inout JSONParser) throws(JSONParser.Failure) {
        try parser.readMembers { parser, key throws(JSONParser.Failure) in
            switch key {
            case "devices":
                guard parser.nextKind == .array else {
                    self.devices = nil
                    _ = try parser.readValue()
                    return
                }
                var devices: [RawDevice] = []
                try parser.readElements { parser throws(JSONParser.Failure) in devices.append(try RawDevice(&parser)) }
                self.devices = devices
            case "counts":
                self.countsAreInvalid = false
                self.unread = nil
                self.missedCalls = nil
                switch parser.nextKind {
                case .object?:
                    try parser.readMembers { parser, key throws(JSONParser.Failure) in
                        switch key {
                        case "unread": self.unread = try parser.readValue()
                        case "missed_calls": self.missedCalls = try parser.readValue()
                        default: _ = try parser.readValue()
                        }
                    }
                default:
                    self.countsAreInvalid = parser.nextKind != .null
                    _ = try parser.readValue()
                }
            case "content":
                if case .object(let members) = try parser.readValue() { self.content = members } else { self.content = nil }
            case "user_is_target":
                if case .bool(let value) = try parser.readValue() { self.userIsTarget = value } else { self.userIsTarget = nil }
            case "event_id": self.eventID = try parser.readValue().stringValue
            case "room_id": self.roomID = try parser.readValue().stringValue
            case "type": self.type = try parser.readValue().stringValue
            case "sender": self.sender = try parser.readValue().stringValue
            case "sender_display_name": self.senderDisplayName = try parser.readValue().stringValue
            case "room_name": self.roomName = try parser.readValue().stringValue
            case "room_alias": self.roomAlias = try parser.readValue().stringValue
            case "prio": self.prio = try parser.readValue().stringValue
            case "membership": self.membership = try parser.readValue().stringValue
            default: _ = try parser.readValue()
            }
        }
    }
}

/// One element of `devices` as read, unvalidated (all nil for an element that is not an object).
private struct RawDevice {
    var appID: JSONValue?
    var pushkey: JSONValue?
    var pushkeyTS: JSONValue?
    var data: JSONValue?
    var tweaks: JSONValue?

    init(_ parser: inout JSONParser) throws(JSONParser.Failure) {
        guard parser.nextKind == .object else {
            _ = try parser.readValue()
            return
        }
        try parser.readMembers { parser, key throws(JSONParser.Failure) in
            switch key {
            case "app_id": self.appID = try parser.readValue()
            case "pushkey": self.pushkey = try parser.readValue()
            case "pushkey_ts": self.pushkeyTS = try parser.readValue()
            case "data": self.data = try parser.readValue()
            case "tweaks": self.tweaks = try parser.readValue()
            default: _ = try parser.readValue()
            }
        }
    }
}
