import Foundation
import PushgateCore
import Testing

@Suite("Redaction")
struct RedactionTests {
    @Test func fingerprintsAreStableShortAndDoNotContainTheSecret() {
        let token = "f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f"
        let fingerprint = Redaction.fingerprint(token)
        #expect(fingerprint == Redaction.fingerprint(token))
        #expect(fingerprint.hasPrefix("t:"))
        #expect(fingerprint.count == 14)
        #expect(!token.contains(fingerprint.dropFirst(2)))
        #expect(fingerprint != Redaction.fingerprint(token + "0"))
        // SHA-256("abc") starts ba7816bf8f01.
        #expect(Redaction.fingerprint("abc") == "t:ba7816bf8f01")
    }

    @Test(arguments: [
        ("postgres://pushgate:s3cr3t@db:5432/pushgate", "postgres://pushgate:***@db:5432/pushgate"),
        ("postgres://pushgate@db/pushgate", "postgres://pushgate@db/pushgate"),
        ("http://user:p@ss:w@proxy:8080", "http://user:***@proxy:8080"),
        ("sqlite:pushgate.sqlite", "sqlite:pushgate.sqlite"),
    ])
    func passwordsAreMaskedInURLs(url: String, masked: String) {
        #expect(Redaction.maskingPassword(in: url) == masked)
    }

    @Test(arguments: [
        ("http://wakuuser:WakuPW789@127.0.0.1:8645", "http://***@127.0.0.1:8645"),
        ("https://gorushuser:GorushPW000@gorush.example/api/push?token=QueryTok111", "https://***@gorush.example/api/push?…"),
        ("https://KEY@proxy.example", "https://***@proxy.example"),
        ("http://127.0.0.1:8645", "http://127.0.0.1:8645"),
        ("http://[::1]:8645/", "http://[::1]:8645/"),
        ("https://push-api.cloud.huawei.com#fragment", "https://push-api.cloud.huawei.com?…"),
        ("not a url with s3cret", "(not a URL with a host; not shown)"),
    ])
    func serviceURLsAreShownWithoutCredentials(url: String, shown: String) {
        #expect(Redaction.displayURL(url) == shown)
    }

    @Test func millisecondTimestampsRoundTrip() {
        let date = Date(millisecondsSince1970: 1_700_000_000_123)
        #expect(date.millisecondsSince1970 == 1_700_000_000_123)
        #expect(Duration.milliseconds(1_500).wholeMilliseconds == 1_500)
        #expect(Duration.seconds(2).wholeMilliseconds == 2_000)
    }

    @Test func outcomesHaveMetricLabels() {
        #expect(DeliveryOutcome.delivered.label == "delivered")
        #expect(DeliveryOutcome.invalidToken(reason: "Unregistered").label == "invalid_token")
        #expect(DeliveryOutcome.retryLater(after: .seconds(3), reason: "429").label == "retry_later")
        #expect(DeliveryOutcome.rejected(reason: "PayloadTooLarge").label == "rejected")
    }
}
