import PushgateCore
@testable import PushgateMatrix
import Testing

@Suite("Matrix notify request validation")
struct MatrixRequestParserTests {
    @Test func synapseRequestsAreAccepted() throws {
        let full = try MatrixFixtures.parse(MatrixFixtures.fullFormat)
        #expect(full.eventID == "$5YeC")
        #expect(full.roomName == "Mission Control")
        #expect(full.unread == 1)
        #expect(full.devices.first?.pushkeyTS == 1_795_300_273)
        #expect(full.devices.first?.defaultPayload == .object(["aps": .object(["mutable-content": .number(1)])]))
        let badge = try MatrixFixtures.parse(MatrixFixtures.badgeOnly)
        #expect(badge.type == nil)
        #expect(badge.sender == "")
        #expect(badge.unread == 0)
        #expect(try MatrixFixtures.parse(MatrixFixtures.eventIDOnly).devices.first?.data?["format"] == .string("event_id_only"))
    }

    @Test(arguments: [
        ("not json", "Expected JSON request body"),
        (#"{"notification": {"devices": []}, "x": NaN}"#, "Expected JSON request body"),
        (#"{}"#, "Invalid notification: expecting object in 'notification' key"),
        (#"{"notification": []}"#, "Invalid notification: expecting object in 'notification' key"),
        (#"{"notification": {}}"#, "Expected list in 'devices' key"),
        (#"{"notification": {"devices": {}}}"#, "Expected list in 'devices' key"),
        (#"{"notification": {"devices": [{"pushkey": "p"}]}}"#, "Device with missing or non-string app_id"),
        (#"{"notification": {"devices": [{"app_id": 1, "pushkey": "p"}]}}"#, "Device with missing or non-string app_id"),
        (#"{"notification": {"devices": [{"app_id": "a"}]}}"#, "Device with missing or non-string pushkey"),
        (#"{"notification": {"devices": [{"app_id": "a", "pushkey": "p", "pushkey_ts": "x"}]}}"#, "pushkey_ts is of invalid type"),
        (#"{"notification": {"devices": [{"app_id": "a", "pushkey": "p", "data": []}]}}"#, "data is of invalid type"),
        (#"{"notification": {"devices": [{"app_id": "a", "pushkey": "p", "tweaks": 3}]}}"#, "tweaks is of invalid type"),
        (#"{"notification": {"devices": [{"app_id": "a", "pushkey": "p", "tweaks": {"sound": 1}}]}}"#, "sound is of invalid type"),
        (#"{"notification": {"counts": {"unread": "2"}, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#, "unread is of invalid type"),
        (#"{"notification": {"counts": {"missed_calls": 1.5}, "devices": [{"app_id": "a", "pushkey": "p"}]}}"#, "missed_calls is of invalid type"),
        (#"{"notification": {"devices": []}}"#, "No devices in notification"),
    ])
    func eachMalformedRequestGetsSygnalsMessage(body: String, message: String) {
        #expect(throws: MatrixRequestError(message: message)) {
            try MatrixRequestParser.parse(Array(body.utf8))
        }
    }
}
