import PushgateCore
import Testing

/// Which refused tokens remove their registrations: those the provider says are gone, not another app's.
@Suite("Tokens gone")
struct DeliveryOutcomeTokenGoneTests {
    @Test func goneTokensAreThoseTheProviderCallsUnregisteredOrMalformedNotAnotherAppsTokens() {
        for reason in ["Unregistered", "BadDeviceToken", "UNREGISTERED", "push service answered 410, the subscription is gone", "80300007"] {
            #expect(DeliveryOutcome.invalidToken(reason: reason).tokenIsGone, "\(reason)")
        }
        for reason in ["DeviceTokenNotForTopic", "TopicDisallowed", "SENDER_ID_MISMATCH"] {
            #expect(!DeliveryOutcome.invalidToken(reason: reason).tokenIsGone, "\(reason)")
        }
        #expect(!DeliveryOutcome.delivered.tokenIsGone)
        #expect(!DeliveryOutcome.rejected(reason: "Unregistered").tokenIsGone)
        #expect(!DeliveryOutcome.retryLater(after: nil, reason: "Unregistered").tokenIsGone)
    }
}
