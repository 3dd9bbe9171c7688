import PushgateCore
@testable import PushgateGorush
import Testing

@Suite("gorush: providers' errors in log entries as gorush shows them")
struct GorushErrorTextTests {
    /// APNs: `PushToIOS` (`notify/notification_apns.go`) logs `errors.New(res.Reason)`, the bare reason of
    /// APNs' answer. Pushgate's refusals before sending (`APNsRequestFactory.problem`) name the reason APNs
    /// would answer, then explain; the log entry has the reason alone.
    @Test(arguments: [
        (DeliveryOutcome.invalidToken(reason: "Unregistered"), "Unregistered"),
        (.rejected(reason: "PayloadTooLarge"), "PayloadTooLarge"),
        (.rejected(reason: "PayloadTooLarge: 4200 bytes, APNs accepts 4096"), "PayloadTooLarge"),
        (.rejected(reason: "BadCollapseId: collapse id longer than 64 bytes"), "BadCollapseId"),
        (.rejected(reason: "InvalidPushType: apns-push-type bogus is not one APNs defines"), "InvalidPushType"),
        (.rejected(reason: "BadMessageId: apns-id x is not a UUID"), "BadMessageId"),
        // Pushgate's own texts (no APNs reason first) stay whole.
        (.rejected(reason: "HTTP 400"), "HTTP 400"),
        (.rejected(reason: "collapse id is not a valid HTTP/2 header value"), "collapse id is not a valid HTTP/2 header value"),
        (.retryLater(after: nil, reason: "transport: connection reset"), "transport: connection reset"),
        (.rejected(reason: "Bad Topic: x"), "Bad Topic: x"),
    ])
    func apnsShowsTheBareReason(_ outcome: DeliveryOutcome, _ error: String) {
        #expect(GorushErrorText.text(for: outcome, platform: .ios) == error)
    }

    /// FCM: `PushToAndroid` (`notify/notification_fcm.go`) logs firebase-admin-go's `FirebaseError`, whose
    /// text is the `message` of Google's error answer (`internal/errors.go` `NewFirebaseErrorOnePlatform`).
    @Test(arguments: [
        (DeliveryOutcome.invalidToken(reason: "UNREGISTERED"), "Requested entity was not found."),
        (.invalidToken(reason: "SENDER_ID_MISMATCH"), "SenderId mismatch"),
        (.invalidToken(reason: "INVALID_ARGUMENT: the registration token is not a valid FCM registration token"),
         "The registration token is not a valid FCM registration token"),
        // Messages that can quote the request are not kept (a difference the README lists).
        (.rejected(reason: "HTTP 400 INVALID_ARGUMENT (message.data)"), "HTTP 400 INVALID_ARGUMENT (message.data)"),
    ])
    func fcmShowsGooglesMessage(_ outcome: DeliveryOutcome, _ error: String) {
        #expect(GorushErrorText.text(for: outcome, platform: .android) == error)
    }

    @Test func aDeliveryHasNoError() {
        for platform in [GorushNotification.Platform.ios, .android, .huawei] {
            #expect(GorushErrorText.text(for: .delivered, platform: platform) == nil)
        }
        #expect(GorushErrorText.text(for: .invalidToken(reason: "80300007 all tokens are invalid"), platform: .huawei) == "80300007 all tokens are invalid")
    }
}
