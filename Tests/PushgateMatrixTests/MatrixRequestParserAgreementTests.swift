import PushgateCore
@testable import PushgateMatrix
import Testing

/// The notify parser walks the body once; these check it against reading the whole JSON tree first and
/// looking members up in it, on bodies where walking order matters: duplicate keys, wrong types, escaped
/// keys, members it does not read.
@Suite("Matrix notify request parsing agrees with reading the whole tree")
struct MatrixRequestParserAgreementTests {
    static let bodies: [String] = [
        MatrixFixtures.fullFormat, MatrixFixtures.eventIDOnly, MatrixFixtures.badgeOnly,
        #"{"notification": {"event_id": "$a", "event_id": 3, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"event_id": 3, "event_id": "$b", "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"devices": []}, "notification": {"devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p"}]}, "notification": 7}"#,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p"}], "devices": {}}}"#,
        #"{"notification": {"devices": 1, "devices": [{"app_id": "a", "pushkey": "p"}, {"app_id": "b", "pushkey": "q"}]}}"#,
        #"{"notification": {"devices": [3, {"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"devices": [{"app_id": "a", "app_id": 2, "pushkey": "p"}]}}"#,
        #"{"notification": {"devices": [{"app_id": 2, "app_id": "a", "pushkey": "p", "extra": {"deep": [1, {"x": null}]}}]}}"#,
        #"{"notification": {"counts": 3, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"counts": 3, "counts": {"unread": 4}, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"counts": {"unread": 4}, "counts": null, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"counts": {"unread": 4, "unread": 5, "missed_calls": 2, "other": "x"}, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"counts": {"unread": 4}, "counts": {"missed_calls": 1}, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"\u0065vent_id": "$escaped", "room\u005fname": "R", "devices": [{"app\u005fid": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"content": {"membership": "invite", "body": "b"}, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"content": {"membership": "invite"}, "membership": "join", "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"content": {"membership": "invite"}, "content": "text", "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        #"{"notification": {"user_is_target": true, "user_is_target": "yes", "devices": [{"app_id": "a", "pushkey": "p"}]}}"#,
        ##"{"notification": {"user_is_target": false, "prio": "low", "room_alias": "#a:b", "devices": [{"app_id": "a", "pushkey": "p", "tweaks": {"sound": null}}]}}"##,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p", "data": null, "tweaks": null, "pushkey_ts": null}]}}"#,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p", "pushkey_ts": 1.5}]}}"#,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p"}], "counts": {"unread": "x"}}, "tail": [1, 2, {"a": {}}]}"#,
        #"[{"notification": {"devices": [{"app_id": "a", "pushkey": "p"}]}}]"#,
        #""notification""#,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p"}]}} x"#,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p"}]}, }"#,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p",}]}}"#,
        #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p"}], "counts": {"unread": 1,}}}"#,
    ]

    @Test(arguments: Self.bodies)
    func walkingAndTheTreeGiveTheSameAnswer(body: String) {
        let walked = Result { () throws(MatrixRequestError) in try MatrixRequestParser.parse(Array(body.utf8)) }
        let fromTree = Result { () throws(MatrixRequestError) in try Self.readFromTree(Array(body.utf8)) }
        #expect(walked == fromTree)
    }

    @Test func nestingDeeperThanTheParserAllowsIsAJSONError() {
        let deep = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        let body = #"{"notification": {"devices": [{"app_id": "a", "pushkey": "p", "data": {"x": \#(deep)}}]}}"#
        #expect(throws: MatrixRequestError(message: "Expected JSON request body")) { try MatrixRequestParser.parse(Array(body.utf8)) }
    }

    /// The reference: the whole tree first, then look-ups, in Sygnal's order.
    static func readFromTree(_ body: [UInt8]) throws(MatrixRequestError) -> MatrixNotification {
        guard let root = try? JSONParser.parse(body) else { throw MatrixRequestError(message: "Expected JSON request body") }
        guard case .object(let notification)? = root["notification"] else {
            throw MatrixRequestError(message: "Invalid notification: expecting object in 'notification' key")
        }
        guard case .array(let rawDevices)? = notification["devices"] else { throw MatrixRequestError(message: "Expected list in 'devices' key") }
        func integer(_ value: JSONValue?, _ name: String) throws(MatrixRequestError) -> Int? {
            switch value {
            case nil, .null?: return nil
            case .number(let number)? where number.rounded() == number && abs(number) < 9.0e15: return Int(number)
            default: throw MatrixRequestError(message: "\(name) is of invalid type")
            }
        }
        func object(_ value: JSONValue?, _ name: String) throws(MatrixRequestError) -> [String: JSONValue]? {
            switch value {
            case nil, .null?: return nil
            case .object(let object)?: return object
            default: throw MatrixRequestError(message: "\(name) is of invalid type")
            }
        }
        var devices: [MatrixDevice] = []
        for raw in rawDevices {
            guard let appID = raw["app_id"]?.stringValue else { throw MatrixRequestError(message: "Device with missing or non-string app_id") }
            guard let pushkey = raw["pushkey"]?.stringValue else { throw MatrixRequestError(message: "Device with missing or non-string pushkey") }
            let pushkeyTS = try integer(raw["pushkey_ts"], "pushkey_ts")
            let data = try object(raw["data"], "data")
            let tweaks = try object(raw["tweaks"], "tweaks")
            if let sound = tweaks?["sound"], sound.stringValue == nil, sound != .null { throw MatrixRequestError(message: "sound is of invalid type") }
            devices.append(MatrixDevice(appID: appID, pushkey: pushkey, pushkeyTS: pushkeyTS, data: data, tweaks: tweaks))
        }
        var counts: [String: JSONValue] = [:]
        if let rawCounts = notification["counts"], rawCounts != .null {
            guard case .object(let members) = rawCounts else { throw MatrixRequestError(message: "counts is of invalid type") }
            counts = members
        }
        let unread = try integer(counts["unread"], "unread")
        let missedCalls = try integer(counts["missed_calls"], "missed_calls")
        guard !devices.isEmpty else { throw MatrixRequestError(message: "No devices in notification") }
        var content: [String: JSONValue]?
        if case .object(let members)? = notification["content"] { content = members }
        return MatrixNotification(
            eventID: notification["event_id"]?.stringValue, roomID: notification["room_id"]?.stringValue,
            type: notification["type"]?.stringValue, sender: notification["sender"]?.stringValue,
            senderDisplayName: notification["sender_display_name"]?.stringValue, roomName: notification["room_name"]?.stringValue,
            roomAlias: notification["room_alias"]?.stringValue,
            userIsTarget: { if case .bool(let value)? = notification["user_is_target"] { return value } else { return nil } }(),
            prio: notification["prio"]?.stringValue, content: content,
            membership: notification["membership"]?.stringValue ?? content?["membership"]?.stringValue,
            unread: unread, missedCalls: missedCalls, devices: devices
        )
    }
}
