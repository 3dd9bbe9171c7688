import PushgateCore
@testable import PushgateMatrix

/// Requests as Synapse 1.163 sends them (see the Matrix reference, "What Synapse actually sends").
enum MatrixFixtures {
    static let fullFormat = #"""
        {"notification":{"content":{"body":"@bob hello there","msgtype":"m.text"},"counts":{"unread":1},
         "devices":[{"app_id":"com.example.capture","data":{"custom_key":"kept","default_payload":{"aps":{"mutable-content":1}}},
           "pushkey":"pk-full","pushkey_ts":1795300273,"tweaks":{"highlight":true,"sound":"default"}}],
         "event_id":"$5YeC","id":"$5YeC","prio":"high","room_id":"!HWLK:localhost","room_name":"Mission Control",
         "sender":"@alice:localhost","sender_display_name":"alice","type":"m.room.message"}}
        """#

    static let eventIDOnly = #"""
        {"notification":{"counts":{"unread":1},"devices":[{"app_id":"com.example.capture","data":{"format":"event_id_only"},
         "pushkey":"pk-eio","pushkey_ts":1795300273}],"event_id":"$2oKk","prio":"high","room_id":"!HWLK:localhost"}}
        """#

    static let badgeOnly = #"""
        {"notification":{"counts":{"unread":0},"devices":[{"app_id":"com.example.capture","data":{"custom_key":"kept",
         "default_payload":{"aps":{"mutable-content":1}}},"pushkey":"pk-full","pushkey_ts":1795300273}],"id":"","sender":"","type":null}}
        """#

    static func parse(_ text: String) throws -> MatrixNotification {
        try MatrixRequestParser.parse(Array(text.utf8))
    }

    /// Sygnal's own test notification: Major Tom in Mission Control, 2 unread and 1 missed call.
    static func majorTom(type: String? = "m.room.message", content: [String: JSONValue]? = ["msgtype": "m.text", "body": "I'm floating in a most peculiar way."]) -> MatrixNotification {
        MatrixNotification(
            eventID: "$qTOWWTEL48yPm3uT-gdNhFcoHxfKbZuqRVnnWWSkGBs", roomID: "!slw48wfj34rtnrf:example.com", type: type,
            sender: "@exampleuser:matrix.org", senderDisplayName: "Major Tom", roomName: "Mission Control", roomAlias: nil,
            userIsTarget: nil, prio: "high", content: content, membership: nil, unread: 2, missedCalls: 1,
            devices: [MatrixDevice(appID: "com.example.apns", pushkey: "spqr", pushkeyTS: 42, data: [:], tweaks: ["sound": "bing"])]
        )
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }
}

import Foundation
