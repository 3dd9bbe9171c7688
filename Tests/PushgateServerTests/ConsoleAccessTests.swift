import Foundation
import PushgateConfig
import PushgateCore
@testable import PushgateServer
import Testing

/// The console's access parts on their own: admin tokens kept as digests, sessions, the sign-in limit,
/// form bodies and HTML escaping.
@Suite("Console access")
struct ConsoleAccessTests {
    @Test func adminTokensAreRecognisedByDigestAndNamedByFingerprint() {
        let admins = ConsoleAdmins([.init(token: "0123456789abcdef-admin"), .init(token: "fedcba9876543210-viewer", readOnly: true)])
        let admin = admins.admin(presenting: "0123456789abcdef-admin")
        #expect(admin?.readOnly == false)
        #expect(admin?.fingerprint.hasPrefix("t:") == true)
        #expect(admins.admin(presenting: "fedcba9876543210-viewer")?.readOnly == true)
        #expect(admins.admin(presenting: "0123456789abcdef-admiN") == nil)
        #expect(admins.admin(presenting: "") == nil)
        #expect(ConsoleAdmins([]).isEmpty)
    }

    @Test func sessionsHaveRandomIdsAndCSRFTokensAndEnd() {
        let sessions = ConsoleSessions()
        let admin = ConsoleAdmins.Admin(fingerprint: "t:000000000000", readOnly: false)
        let first = sessions.start(for: admin)
        let second = sessions.start(for: admin)
        #expect(first.id.count == 64 && first.id.allSatisfy(\.isHexDigit))
        #expect(first.id != second.id && first.csrfToken != second.csrfToken)
        #expect(sessions.session(id: first.id)?.admin == admin)
        sessions.end(id: first.id)
        #expect(sessions.session(id: first.id) == nil)
        #expect(sessions.session(id: second.id) != nil)
        let expired = ConsoleSessions(lifetime: .zero)
        #expect(expired.session(id: expired.start(for: admin).id) == nil)
    }

    /// What a reload does to sessions: those of a token no longer configured, or whose read-only flag
    /// changed, end; the others stay.
    @Test func sessionsOfTokensAReloadRemovedEnd() throws {
        let before = ConsoleAdmins([.init(token: "0123456789abcdef-admin"), .init(token: "fedcba9876543210-viewer", readOnly: true)])
        let sessions = ConsoleSessions()
        let admin = try #require(before.admin(presenting: "0123456789abcdef-admin"))
        let viewer = try #require(before.admin(presenting: "fedcba9876543210-viewer"))
        let kept = sessions.start(for: admin)
        let ended = sessions.start(for: viewer)
        let after = ConsoleAdmins([.init(token: "0123456789abcdef-admin"), .init(token: "fedcba9876543210-viewer", readOnly: false)])
        #expect(after.contains(admin) && !after.contains(viewer))
        sessions.keep { after.contains($0.admin) }
        #expect(sessions.session(id: kept.id) != nil)
        #expect(sessions.session(id: ended.id) == nil)
    }

    @Test func failedSignInsAreLimitedPerAddress() {
        let limiter = ConsoleSignInLimiter(limit: 3, window: .seconds(60))
        // A right token takes back the try it began with.
        #expect(limiter.begin("192.0.2.1"))
        limiter.succeeded("192.0.2.1")
        for _ in 0..<3 { #expect(limiter.begin("192.0.2.1")) }
        #expect(!limiter.begin("192.0.2.1"))
        #expect(!limiter.begin("192.0.2.1"))
        #expect(limiter.begin("192.0.2.2"))
        let short = ConsoleSignInLimiter(limit: 1, window: .zero)
        #expect(short.begin("192.0.2.1"))
        #expect(short.begin("192.0.2.1"), "the window ended")
    }

    /// An IPv6 client counts by its /64, and once the limiter holds its capacity every further address
    /// shares one count: many addresses neither fill it nor escape it.
    @Test func manyAddressesShareOneCountPastTheCapacity() {
        #expect(ConsoleSignInLimiter.counted("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(ConsoleSignInLimiter.counted("2001:db8:1:2:bbbb::2") == "2001:db8:1:2::/64")
        #expect(ConsoleSignInLimiter.counted("192.0.2.1") == "192.0.2.1")
        let limiter = ConsoleSignInLimiter(limit: 2, window: .seconds(60), capacity: 3)
        #expect(limiter.begin("2001:db8:1:2::1"))
        #expect(limiter.begin("2001:db8:1:2::2"))
        #expect(!limiter.begin("2001:db8:1:2::3"), "the same /64")
        #expect(limiter.begin("192.0.2.1"))
        #expect(limiter.begin("192.0.2.2"))
        // Full: new addresses share one count.
        #expect(limiter.begin("192.0.2.10"))
        #expect(limiter.begin("192.0.2.11"))
        #expect(!limiter.begin("192.0.2.12"))
        #expect(limiter.begin("192.0.2.1"), "an address already counted keeps its own count")
    }

    /// Behind the TLS proxy, failures count against the client the proxy names last, not the proxy
    /// (which every admin shares) nor an address the client wrote itself.
    @Test func behindTheProxyFailedSignInsCountAgainstTheAddressItAdded() {
        #expect(ConsoleRoutes.signInAddress(peer: "10.0.0.2", forwardedFor: "198.51.100.7, 203.0.113.9", behindProxy: true) == "203.0.113.9")
        #expect(ConsoleRoutes.signInAddress(peer: "10.0.0.2", forwardedFor: "203.0.113.9", behindProxy: true) == "203.0.113.9")
        #expect(ConsoleRoutes.signInAddress(peer: "10.0.0.2", forwardedFor: nil, behindProxy: true) == "10.0.0.2")
        #expect(ConsoleRoutes.signInAddress(peer: "10.0.0.2", forwardedFor: " ", behindProxy: true) == "10.0.0.2")
        // Not behind a proxy: the header is the client's own word.
        #expect(ConsoleRoutes.signInAddress(peer: "10.0.0.2", forwardedFor: "203.0.113.9", behindProxy: false) == "10.0.0.2")
    }

    @Test func formsAndHTMLAreReadAndWrittenSafely() {
        #expect(ConsoleForm.parse(Array("token=a%2Bb+c&alert=%C3%A9t%C3%A9&x=%zz&&empty=".utf8)) == ["token": "a+b c", "alert": "été", "empty": ""])
        #expect(HTMLText.escape(#"<script>"x" & 'y'</script>"#) == "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;")
        #expect(ConsoleRoutes.isLoopback("127.0.0.1") && ConsoleRoutes.isLoopback("::1") && !ConsoleRoutes.isLoopback("192.0.2.1"))
    }
}

/// Credentials' expiry warnings, 30, 7 and 1 day ahead.
@Suite("Console credentials")
struct ConsoleCredentialTests {
    @Test func warningsComeThirtySevenAndOneDayAhead() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func warning(days: Double?) -> String? {
            let credential = ProviderCredential(
                appID: "a", kind: .apnsCertificate, file: nil, identity: "CN=a", notAfter: days.map { now.addingTimeInterval($0 * 86_400) }
            )
            return ConsoleOverviewSource.credential(credential, now: now).warning
        }
        #expect(warning(days: nil) == nil)
        #expect(warning(days: 31) == nil)
        #expect(warning(days: 29) == "30 days")
        #expect(warning(days: 6) == "7 days")
        #expect(warning(days: 0.5) == "1 day")
        #expect(warning(days: -1) == "expired")
    }
}
