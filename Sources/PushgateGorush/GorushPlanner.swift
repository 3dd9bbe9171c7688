import PushgateConfig
import PushgateCore

/// Turns the notifications of one request into provider requests, as gorush would send them: platform
/// 1 one APNs request per token, platform 2 one FCM message per token (plus one to the topic or
/// condition), notifications for platforms that are not configured dropped and not counted.
struct GorushPlanner: Sendable {
    let router: GorushAppRouter
    let hideToken: Bool
    let hideMessages: Bool

    func plan(_ notifications: [GorushNotification]) -> GorushPlan {
        var plan = GorushPlan()
        plan.deliveries.reserveCapacity(notifications.reduce(0) { $0 + $1.tokens.count + 1 })
        for (index, notification) in notifications.enumerated() {
            guard let platform = notification.knownPlatform, self.router.serves(notification, on: platform) else {
                plan.unserved += 1
                continue
            }
            plan.counts += notification.countedTargets
            // Nothing to send to: gorush sends nothing and lists nothing (`PushToIOS` has no token to loop
            // over; `PushToAndroid` and `PushToHuawei` stop at `CheckMessage`'s error, which the sync answer
            // drops and the feedback lists for no token).
            guard notification.hasTarget else { continue }
            func refuse(_ tokens: [String], _ error: String) {
                for token in tokens {
                    plan.refusals.append(
                        GorushLogEntry(failureOf: notification, platform: platform, token: token, error: error, hideToken: self.hideToken, hideMessages: self.hideMessages)
                    )
                }
            }
            let appID: String
            switch self.router.app(for: notification, platform: platform) {
            case .success(let app): appID = app
            case .failure(let refusal):
                refuse(notification.tokens.isEmpty ? [""] : notification.tokens, refusal.reason)
                continue
            }
            switch platform {
            case .ios:
                let built: PushNotification
                do {
                    built = try GorushAPNsPayload.notification(for: notification)
                } catch {
                    refuse(notification.tokens.isEmpty ? [""] : notification.tokens, error.reason)
                    continue
                }
                plan.appIDs.insert(appID)
                for token in notification.tokens {
                    if token.isEmpty {
                        refuse([token], "the device token cannot be empty")
                    } else {
                        plan.deliveries.append(GorushDelivery(index: index, platform: platform, appID: appID, token: token, notification: built))
                    }
                }
            case .android, .huawei:
                var tokens = notification.tokens
                if !notification.to.isEmpty { tokens.append(notification.to) }
                plan.appIDs.insert(appID)
                // What firebase-admin-go refuses to send is one failure for no token, and nothing is sent
                // (`notify/notification_fcm.go` `PushToAndroid`, when `client.Send` fails); gorush returns
                // the error with it, so the answer does not list it.
                if platform == .android, let refusal = GorushFCMPayload.refusal(of: notification) {
                    plan.unlisted.append(
                        GorushLogEntry(failureOf: notification, platform: platform, token: "", error: refusal, hideToken: self.hideToken, hideMessages: self.hideMessages)
                    )
                    continue
                }
                if notification.isTopicSend {
                    let target = notification.condition.isEmpty ? notification.topic : notification.condition
                    plan.deliveries.append(
                        GorushDelivery(
                            index: index, platform: platform, appID: appID, token: target, isTopicSend: true,
                            notification: Self.build(notification, platform: platform, toTopic: true)
                        )
                    )
                }
                let built = Self.build(notification, platform: platform, toTopic: false)
                for token in tokens {
                    if token.isEmpty {
                        refuse([token], "the device token cannot be empty")
                    } else {
                        plan.deliveries.append(GorushDelivery(index: index, platform: platform, appID: appID, token: token, notification: built))
                    }
                }
            }
        }
        return plan
    }

    /// The FCM or HMS message for a token or for the topic send.
    private static func build(_ notification: GorushNotification, platform: GorushNotification.Platform, toTopic: Bool) -> PushNotification {
        platform == .huawei
            ? GorushHMSPayload.notification(for: notification, toTopic: toTopic) : GorushFCMPayload.notification(for: notification, toTopic: toTopic)
    }
}
