import Foundation
import PushgateProviderSupport
import Testing

@testable import PushgateWebPush

/// An endpoint's parts, read once from its URL, are what each reader took from the URL itself.
@Suite("Web Push endpoint parts")
struct WebPushEndpointTests {
    static let urls = [
        "https://push.example.net/wpush/v2/abc?x=1&y=%2F",
        "https://Push.Example.net:443/a/b",
        "http://127.0.0.1:8080/sub/ok",
        "https://[2001:db8::1]:8443/p",
        "https://[2001:db8::1]/p",
        "HTTPS://updates.push.services.mozilla.com",
        "ftp://files.example/x",
        "mailto:someone@example.org",
        "https:///no-host",
    ]

    @Test(arguments: urls)
    func partsMatchWhatEachReaderTakesFromTheURL(_ text: String) throws {
        let url = try #require(URL(string: text))
        let endpoint = WebPushEndpoint(url)
        #expect(endpoint.url == url)
        #expect(endpoint.scheme == url.scheme?.lowercased())
        #expect(endpoint.hostAndPort == PushEndpoint.hostAndPort(of: url))
        #expect(endpoint.origin == PushEndpoint.origin(of: url))
        let destination = HTTP1ConnectionPool.Destination(url)
        #expect(endpoint.destination?.origin == destination?.origin)
        #expect(endpoint.destination?.target == destination?.target)
        #expect(endpoint.destination?.hostHeader == destination?.hostHeader)
    }

    @Test func theVAPIDAudienceAndTargetOfATypicalEndpoint() throws {
        let endpoint = WebPushEndpoint(try #require(URL(string: "https://Push.Example.net:443/wpush/v2/abc?x=1")))
        #expect(endpoint.origin == "https://push.example.net")
        #expect(endpoint.destination?.target == "/wpush/v2/abc?x=1")
        #expect(endpoint.destination?.hostHeader.lowercased() == "push.example.net")
        #expect(WebPushEndpoint(try #require(URL(string: "mailto:someone@example.org"))).destination == nil)
    }
}
