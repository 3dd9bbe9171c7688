import Testing

@testable import PushgateServer

/// The small parts of the gateway's HTTP/1.1 channel: request targets, `Date` values, body limits.
@Suite("Gateway HTTP parts")
struct GatewayHTTPPartsTests {
    @Test(arguments: [
        ("http://example.com/_matrix/push/v1/notify", "/_matrix/push/v1/notify"),
        ("http://example.com/api/push?x=1#frag", "/api/push?x=1"),
        ("https://example.com", "/"),
        ("http://example.com?x=1", "/?x=1"),
        ("http://example.com#frag", "/"),
    ])
    func anAbsoluteFormTargetGivesItsPathAndQuery(target: String, expected: String) {
        #expect(AbsoluteFormTarget(target)?.pathAndQuery == expected)
    }

    @Test func aTargetWithoutSchemeIsNotAbsoluteForm() {
        #expect(AbsoluteFormTarget("example.com:443") == nil)
    }

    /// RFC 9110's own example, the epoch, and a leap day.
    @Test(arguments: [
        (Int64(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"),
        (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"),
        (Int64(1_709_164_799), "Wed, 28 Feb 2024 23:59:59 GMT"),
        (Int64(1_709_164_800), "Thu, 29 Feb 2024 00:00:00 GMT"),
    ])
    func dateValuesAreIMFFixdates(second: Int64, expected: String) {
        #expect(HTTPDateCache.format(second) == expected)
    }

    @Test func aPathWithItsOwnLimitGetsTheLargerOfTheTwo() {
        let limits = RequestBodyLimits(standard: 1_024, byPath: ["/notifications": 4_096, "/small": 10])
        #expect(limits.limit(forTarget: "/notifications?x=1") == 4_096)
        #expect(limits.limit(forTarget: "/small") == 1_024)
        #expect(limits.limit(forTarget: "/other") == 1_024)
        #expect(limits.limit(forTarget: "/notifications") == 4_096)
        #expect(limits.limit(forTarget: "/notifications?") == 4_096)
        // The router finds the route with a trailing slash too, and the middleware must agree with the
        // dispatcher (which cuts a body at its limit), or a cut body passes as a whole one.
        #expect(limits.limit(forTarget: "/notifications/?x") == 4_096)
        #expect(limits.limit(forTarget: "http://gateway.example/notifications") == 4_096)
        #expect(limits.limit(forTarget: "https://gateway.example:8443/notifications?x=1") == 4_096)
        #expect(limits.limit(forTarget: "http://gateway.example/other") == 1_024)
        #expect(limits.limit(forTarget: "http://gateway.example") == 1_024)
        #expect(limits.limit(forPath: "/notifications/") == 4_096)
        #expect(limits.limit(forPath: "/") == 1_024)
        #expect(limits.limit(forTarget: "/é/notifications?x") == 1_024)
        #expect(limits.limit(forTarget: "?/notifications") == 1_024)
        #expect(limits.limit(forPath: "/notifications") == 4_096)
    }
}
