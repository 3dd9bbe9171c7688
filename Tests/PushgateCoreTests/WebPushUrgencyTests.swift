import Foundation
import PushgateCore
import Testing

@Suite("Web Push urgency")
struct WebPushUrgencyTests {
    @Test func theFourLevelsAreRFC8030s() {
        #expect(WebPushUrgency.allCases.map(\.rawValue) == ["very-low", "low", "normal", "high"])
    }

    /// What a stated priority means when a front end states no urgency (`pushgate send`, front ends without
    /// Web Push apps): high priority is `high`; normal priority is `low` for background and `normal` otherwise.
    @Test func theDefaultFollowsPriorityAndKind() {
        #expect(WebPushUrgency(kind: .alert, priority: .high) == .high)
        #expect(WebPushUrgency(kind: .voip, priority: .high) == .high)
        #expect(WebPushUrgency(kind: .background, priority: .high) == .high)
        #expect(WebPushUrgency(kind: .alert, priority: .normal) == .normal)
        #expect(WebPushUrgency(kind: .voip, priority: .normal) == .normal)
        #expect(WebPushUrgency(kind: .background, priority: .normal) == .low)
    }

    @Test func aStatedUrgencyIsNeverReplacedByTheDefault() {
        for urgency in WebPushUrgency.allCases {
            for kind in PushKind.allCases {
                for priority in PushPriority.allCases {
                    let notification = PushNotification(kind: kind, priority: priority, payload: [:], webPushUrgency: urgency)
                    #expect(notification.effectiveWebPushUrgency == urgency)
                }
            }
        }
        #expect(PushNotification(kind: .background, priority: .normal, payload: [:]).effectiveWebPushUrgency == .low)
        // Neither an urgency nor a priority stated: none (the push service's default applies).
        #expect(PushNotification(payload: [:]).effectiveWebPushUrgency == nil)
        #expect(PushNotification(kind: .background, payload: [:]).effectiveWebPushUrgency == nil)
    }

    @Test func theUrgencyIsStoredWithTheNotification() throws {
        let notification = PushNotification(kind: .alert, priority: .normal, payload: ["a": 1], collapseID: "t", webPushUrgency: .veryLow)
        let encoded = try JSONEncoder().encode(notification)
        #expect(String(decoding: encoded, as: UTF8.self).contains(#""webPushUrgency":"very-low""#))
        #expect(try JSONDecoder().decode(PushNotification.self, from: encoded) == notification)
        // Without a stated urgency nothing new is written: an older version reads the entry unchanged.
        let plain = try JSONEncoder().encode(PushNotification(payload: ["a": 1]))
        #expect(!String(decoding: plain, as: UTF8.self).contains("webPushUrgency"))
    }
}
