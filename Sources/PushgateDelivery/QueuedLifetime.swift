public import Foundation
public import PushgateCore

/// What is left of a queued notification's lifetime when the outbox tries it again.
///
/// A front end's time to live counts from when the notification was accepted (Web Push's `TTL`, FCM's and
/// Huawei's `ttl`, an APNs expiry computed from it): a notification that waited in the outbox goes out with
/// what is left, and not at all once that has run out, since the provider would have dropped it by then
/// and the device must not show it late. The outbox gives a notification without one its back end's own
/// (``PushProvider/defaultTimeToLive``: a Web Push or UnifiedPush app's `ttl`) first; one that still has
/// none goes unchanged (the provider's service's default counts from when it is sent), as does an absolute
/// APNs `expiration`. A time to live of 0 asks for "now or never": its first try goes out however long the
/// queue held it (as a gateway's own queue would send it), and once a try failed it is not sent again.
public enum QueuedLifetime {
    /// The notification to send after it waited `age` since it was accepted: its time to live less the
    /// whole seconds waited; nil when that leaves nothing (the lifetime ran out), or when it is 0 and
    /// `tried` (a try failed already). `age` is read only for a notification with a time to live (the
    /// outbox asks for every token it delivers, most of them without one).
    public static func remaining(of notification: PushNotification, age: @autoclosure () -> TimeInterval, tried: Bool) -> PushNotification? {
        guard let timeToLive = notification.timeToLive else { return notification }
        guard timeToLive > 0 else { return tried ? nil : notification }
        let age = age()
        // Whole seconds, as the providers count; a clock that went back counts as no wait.
        let waited = age >= 1 ? (age < Double(Int.max / 2) ? Int(age) : Int.max / 2) : 0
        guard waited > 0 else { return notification }
        guard timeToLive > waited else { return nil }
        var sent = notification
        sent.timeToLive = timeToLive - waited
        return sent
    }
}
