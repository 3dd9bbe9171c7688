public import PushgateCore

/// gorush's translation of a `POST /api/push` body into provider requests, for front ends that speak to
/// devices the way a gorush caller would (a Status push notification server builds gorush requests and
/// hands them here instead of posting them to a gorush).
public enum GorushTranslation {
    /// One device's provider notification.
    public struct DeviceNotification: Sendable, Equatable {
        /// gorush's platform number: 1 iOS (APNs), 2 Android (FCM), 3 Huawei (HMS).
        public let platform: Int
        /// The device token.
        public let token: String
        /// What the provider receives, as gorush would send it.
        public let notification: PushNotification
    }

    /// Why a body cannot be translated.
    public struct Untranslatable: Error, Equatable, CustomStringConvertible {
        /// What was wrong (never a value from the body).
        public let description: String
    }

    /// The notification gorush would send to each device token of each notification in `body`; topic and
    /// condition sends, empty tokens and unknown platforms are left out.
    /// - Throws: ``Untranslatable`` when gorush would refuse the body or a notification.
    public static func deviceNotifications(body: [UInt8]) throws(Untranslatable) -> [DeviceNotification] {
        let notifications: [GorushNotification]
        do {
            notifications = try GorushRequestReader.notifications(body)
        } catch {
            throw Untranslatable(description: error.reason)
        }
        var result: [DeviceNotification] = []
        for notification in notifications {
            guard let platform = notification.knownPlatform else { continue }
            let built: PushNotification
            switch platform {
            case .ios:
                do {
                    built = try GorushAPNsPayload.notification(for: notification)
                } catch {
                    throw Untranslatable(description: error.reason)
                }
            case .android:
                built = GorushFCMPayload.notification(for: notification, toTopic: false)
            case .huawei:
                built = GorushHMSPayload.notification(for: notification, toTopic: false)
            }
            for token in notification.tokens where !token.isEmpty {
                result.append(DeviceNotification(platform: platform.rawValue, token: token, notification: built))
            }
        }
        return result
    }
}
