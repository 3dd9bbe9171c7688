import Crypto
import Foundation
import PushgateProviderSupport
import PushgateWebPush
import Testing

@Suite("Web Push subscriptions")
struct WebPushSubscriptionTests {
    @Test(arguments: [false, true])
    func parsesPaddedAndUnpaddedKeys(padded: Bool) throws {
        let subscriber = TestFixtures.Subscriber()
        let subscription = try WebPushSubscription(token: subscriber.token(endpoint: "https://push.example/sub/1", padded: padded))
        #expect(subscription.endpoint.absoluteString == "https://push.example/sub/1")
        #expect(subscription.userAgentPublicKey.x963Representation == subscriber.key.publicKey.x963Representation)
        #expect(subscription.authSecret == subscriber.authSecret)
    }

    @Test(arguments: [
        "",
        "not json",
        "[1, 2]",
        #"{"keys": {"p256dh": "AAAA", "auth": "AAAA"}}"#,
        #"{"endpoint": "https://push.example/x"}"#,
        #"{"endpoint": "https://push.example/x", "keys": {"p256dh": "!!!", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#,
        #"{"endpoint": "https://push.example/x", "keys": {"p256dh": "BAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#,
        #"{"endpoint": "not a url", "keys": {"p256dh": "BAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}"#,
    ])
    func malformedTokensAreRefused(token: String) {
        #expect(throws: WebPushSubscription.ParseError.self) { try WebPushSubscription(token: token) }
    }

    @Test func authSecretMustBeSixteenBytes() throws {
        let subscriber = TestFixtures.Subscriber()
        let p256dh = Base64URL.encode(subscriber.key.publicKey.x963Representation)
        let shortAuth = Base64URL.encode([UInt8](repeating: 7, count: 8))
        let token = #"{"endpoint": "https://push.example/x", "keys": {"p256dh": "\#(p256dh)", "auth": "\#(shortAuth)"}}"#
        let error = try #require(throws: WebPushSubscription.ParseError.self) { try WebPushSubscription(token: token) }
        #expect(error.reason.contains("16 bytes"))
    }
}
