import PushgateCore
@testable import PushgateWebPush
import Testing

/// The `Urgency` and `Topic` headers encode what the front end stated, and nothing else.
@Suite("Web Push headers")
struct WebPushHeadersTests {
    @Test(arguments: WebPushUrgency.allCases)
    func aStatedUrgencyIsSentAsItIs(_ urgency: WebPushUrgency) {
        for kind in PushKind.allCases {
            for priority in PushPriority.allCases {
                let notification = PushNotification(kind: kind, priority: priority, payload: [:], webPushUrgency: urgency)
                #expect(WebPushHeaders.urgency(for: notification) == urgency.rawValue)
            }
        }
    }

    @Test func withoutAStatedUrgencyTheDefaultApplies() {
        #expect(WebPushHeaders.urgency(for: PushNotification(kind: .alert, priority: .high, payload: [:])) == "high")
        #expect(WebPushHeaders.urgency(for: PushNotification(kind: .alert, priority: .normal, payload: [:])) == "normal")
        #expect(WebPushHeaders.urgency(for: PushNotification(kind: .background, priority: .normal, payload: [:])) == "low")
        #expect(WebPushHeaders.urgency(for: PushNotification(kind: .alert, priority: .normal, payload: [:], webPushUrgency: .veryLow)) == "very-low")
        // Neither an urgency nor a priority stated: no header.
        #expect(WebPushHeaders.urgency(for: PushNotification(kind: .alert, payload: [:])) == nil)
        #expect(WebPushHeaders.urgency(for: PushNotification(kind: .background, payload: [:])) == nil)
    }

    @Test(arguments: [
        "room-1",
        "A",
        "abcdefghijklmnopqrstuvwxyzABCDEF",  // 32 characters
        "RURl-mGrL3Gtdl-_0CCD3j0bD8MwkA==",  // Sygnal's padded room topic, 32 characters
        "YWJj=",
        "0_-9",
    ])
    func validTopicsAreSentUnchanged(_ topic: String) {
        #expect(WebPushHeaders.isValidTopic(topic))
        #expect(WebPushHeaders.topic(for: PushNotification(payload: [:], collapseID: topic)) == .success(topic))
    }

    @Test(arguments: [
        "abcdefghijklmnopqrstuvwxyzABCDEFG",  // 33 characters
        "RURl-mGrL3Gtdl-_0CCD3j0bD8MwkA===",  // 33 with the padding
        "!room:example.org",
        "a=b",
        "=",
        "==",
        "room 1",
        "a+b/",
        "é",
    ])
    func invalidTopicsRejectTheNotification(_ topic: String) {
        #expect(!WebPushHeaders.isValidTopic(topic))
        #expect(WebPushHeaders.topic(for: PushNotification(payload: [:], collapseID: topic)) == .failure(WebPushHeaders.InvalidTopic()))
    }

    @Test func noOrAnEmptyCollapseIDSendsNoTopic() {
        #expect(WebPushHeaders.topic(for: PushNotification(payload: [:])) == .success(nil))
        #expect(WebPushHeaders.topic(for: PushNotification(payload: [:], collapseID: "")) == .success(nil))
    }
}
