import PushgateCore
import PushgateDelivery
import Testing

@Suite("App lookup and retry policy")
struct LookupAndPolicyTests {
    @Test(arguments: [
        ("im.example.*", "im.example.ios", true),
        ("im.example.*", "im.example.", true),
        ("im.example.*", "im.exampleXios", false),
        ("im.?xample.ios", "im.example.ios", true),
        ("im.?xample.ios", "im.xample.ios", false),
        ("*", "anything", true),
        ("a*b*c", "aXXbYYc", true),
        ("a*b*c", "aXXbYY", false),
        ("IM.example.ios", "im.example.ios", false),
    ])
    func globsMatchWholeIdsCaseSensitively(pattern: String, appID: String, matches: Bool) {
        #expect(AppPattern(pattern).matches(appID) == matches)
    }

    /// Two globs overlap when some id matches both: then that id is ambiguous.
    @Test(arguments: [
        ("im.example.*", "im.example.ios.*", true),
        ("im.example.*", "im.other.*", false),
        ("*.ios", "im.*", true),
        ("*.ios", "*.android", false),
        ("a?c", "*b*", true),
        ("a?c", "ab", false),
        ("a*", "*a", true),
        ("ab*", "*ba", true),
        ("x*y", "x?", true),
        ("x*y", "x?z", false),
        ("x*y", "x??", true),
        ("im.example.ios", "im.example.*", true),
        ("im.example.ios", "im.example.ios", true),
        ("im.example.ios", "im.example.io", false),
    ])
    func globsOverlapWhenSomeIdMatchesBoth(first: String, second: String, overlap: Bool) {
        #expect(AppPattern(first).overlaps(AppPattern(second)) == overlap)
        #expect(AppPattern(second).overlaps(AppPattern(first)) == overlap)
    }

    /// An exact id wins, then the one glob that matches; none is unknown, several ambiguous. An app named
    /// `"*"` takes only what no other app claims: beside other globs it makes nothing ambiguous (a
    /// homeserver deletes a pusher whose notification is rejected as ambiguous).
    @Test(arguments: [false, true])
    func exactIdsWinThenOneGlobThenTheCatchAllElseUnknownOrAmbiguous(withCatchAll: Bool) {
        let directory = ProviderDirectory(
            (withCatchAll ? [ScriptedProvider(appID: "*")] : []) + [
                ScriptedProvider(appID: "im.example.*"),
                ScriptedProvider(appID: "im.example.ios"),
                ScriptedProvider(appID: "com.other.*"),
                ScriptedProvider(appID: "com.*.web"),
            ])
        func found(_ id: String) -> String? {
            if case .found(let provider) = directory.lookup(id) { return provider.appID }
            return nil
        }
        #expect(found("im.example.ios") == "im.example.ios")
        #expect(found("im.example.android") == "im.example.*")
        if withCatchAll {
            #expect(found("org.unknown") == "*")
            #expect(found("chat.fluffy.fluffychat.ABCDEF") == "*")
        } else {
            guard case .unknown = directory.lookup("org.unknown") else {
                Issue.record("expected unknown")
                return
            }
        }
        // Two globs other than the catch-all make an id ambiguous.
        guard case .ambiguous = directory.lookup("com.other.web") else {
            Issue.record("expected ambiguous")
            return
        }
    }

    @Test func backoffGrowsWithJitterAndHonoursRetryAfter() {
        let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(60), maximumAge: .seconds(3600))
        #expect(policy.delay(afterAttempts: 1, requested: nil, random: 0) == .milliseconds(500))
        #expect(policy.delay(afterAttempts: 1, requested: nil, random: 0.999_999) < .seconds(1))
        #expect(policy.delay(afterAttempts: 4, requested: nil, random: 0) == .seconds(4))
        #expect(policy.delay(afterAttempts: 40, requested: nil, random: 1) == .seconds(60))
        #expect(policy.delay(afterAttempts: 1, requested: .seconds(30), random: 0) == .seconds(30))
        #expect(policy.delay(afterAttempts: 1, requested: .seconds(99_999), random: 0) == .seconds(3600))
    }
}
