import Foundation
import PushgateNextcloudSDK
import Testing

@Suite("Push plaintexts")
struct NextcloudPushMessageTests {
    static let wellFormed: [(String, NextcloudPushMessage)] = [
        (
            #"{"nid":525210,"app":"admin_notification_talk","subject":"Testing push notifications","type":"admin_notifications","id":"614aeee4"}"#,
            .notification(.init(app: "admin_notification_talk", type: "admin_notifications", subject: "Testing push notifications", id: "614aeee4", nid: 525210))
        ),
        (
            #"{"app":"spreed","subject":"Test mentioned you in a private conversation","type":"chat","id":"t0k3n","nid":1337}"#,
            .notification(.init(app: "spreed", type: "chat", subject: "Test mentioned you in a private conversation", id: "t0k3n", nid: 1337))
        ),
        (
            #"{"nid":7,"app":"files_sharing","subject":"Bob shared \u00bbq3\/report.pdf\u00ab with you…","type":"remote_share","id":184467}"#,
            .notification(.init(app: "files_sharing", type: "remote_share", subject: "Bob shared »q3/report.pdf« with you…", id: "184467", nid: 7))
        ),
        (#"{"nid":1337,"delete":true}"#, .delete(nid: 1337)),
        (#"{"nids":[1,2,3],"delete-multiple":true}"#, .deleteMultiple(nids: [1, 2, 3])),
        (#"{"delete-all":true}"#, .deleteAll),
        (#"{"nid":1337,"delete":false,"app":"a","subject":"s","type":"t","id":"i"}"#, .notification(.init(app: "a", type: "t", subject: "s", id: "i", nid: 1337))),
    ]

    @Test(arguments: wellFormed)
    func decodes(_ plaintext: String, _ expected: NextcloudPushMessage) throws {
        #expect(try NextcloudPushMessage(plaintext: Data(plaintext.utf8)) == expected)
    }

    static let malformed: [String] = [
        "",
        "not json",
        "null",
        "[]",
        #""delete-all""#,
        "{}",
        #"{"delete":true}"#,
        #"{"delete":true,"nid":"1337"}"#,
        #"{"delete-multiple":true}"#,
        #"{"nids":"1,2","delete-multiple":true}"#,
        #"{"nids":[1,"2"],"delete-multiple":true}"#,
        #"{"delete-all":"yes"}"#,
        #"{"delete-all":1}"#,
        #"{"app":"spreed","subject":"s","type":"chat","id":"t"}"#,
        #"{"nid":1,"subject":"s","type":"chat","id":"t"}"#,
        #"{"nid":1,"app":"spreed","type":"chat","id":"t"}"#,
        #"{"nid":1,"app":"spreed","subject":"s","id":"t"}"#,
        #"{"nid":1,"app":"spreed","subject":"s","type":"chat"}"#,
        #"{"nid":1,"app":"spreed","subject":"s","type":"chat","id":["t"]}"#,
        #"{"nid":1.5,"app":"spreed","subject":"s","type":"chat","id":"t"}"#,
        #"{"nid":1,"app":7,"subject":"s","type":"chat","id":"t"}"#,
        #"{"nid":1,"app":"spreed","subject":"s","type":"chat","id":null}"#,
        #"{"nid":1337,"delete":true"#,
    ]

    @Test(arguments: malformed)
    func refuses(_ plaintext: String) {
        let error = #expect(throws: NextcloudPushError.self) { try NextcloudPushMessage(plaintext: Data(plaintext.utf8)) }
        guard case .malformedPlaintext = error else {
            Issue.record("expected malformedPlaintext, got \(String(describing: error))")
            return
        }
    }

    @Test func refusesBytesThatAreNotUTF8() {
        #expect(throws: NextcloudPushError.self) { try NextcloudPushMessage(plaintext: Data([0x7B, 0xFF, 0xFE, 0x7D])) }
    }
}
