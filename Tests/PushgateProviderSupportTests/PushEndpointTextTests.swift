import Foundation
@testable import PushgateProviderSupport
import Testing

/// ``PushEndpoint/init(text:)`` reads the plain form of endpoint URLs itself: every part it gives must be
/// what Foundation's parser gives for the same text (``PushEndpoint/init(_:)``), and text outside the plain
/// form must still be read, by Foundation.
@Suite("Push endpoint read from text")
struct PushEndpointTextTests {
    /// The parts the policy, the connection pool and the VAPID signer use.
    struct Parts: Equatable, CustomStringConvertible {
        var scheme: String?
        var host: String?
        var hostAndPort: String?
        var isTLS: Bool?
        var originHost: String?
        var port: Int?
        var hostHeader: String?
        var target: String?
        var afterMethod: [UInt8]?
        var origin: String?

        init(_ endpoint: PushEndpoint) {
            self.scheme = endpoint.scheme
            self.host = endpoint.host
            self.hostAndPort = endpoint.hostAndPort
            self.isTLS = endpoint.destination?.origin.isTLS
            self.originHost = endpoint.destination?.origin.host
            self.port = endpoint.destination?.origin.port
            self.hostHeader = endpoint.destination?.hostHeader
            self.target = endpoint.destination?.target
            self.afterMethod = endpoint.destination?.afterMethod
            self.origin = endpoint.origin
        }

        var description: String {
            "\(self.scheme ?? "-") \(self.host ?? "-") \(self.hostAndPort ?? "-") \(self.port.map(String.init) ?? "-") \(self.hostHeader ?? "-") \(self.target ?? "-") \(self.origin ?? "-")"
        }
    }

    /// Texts in the plain form (read without Foundation).
    static let plain = [
        "https://ntfy.sh/upAbCdEf123?up=1",
        "https://push.example.org/index.php/apps/uppush/push/0123456789abcdef",
        "https://fcm.distributor.unifiedpush.org/?v2&instance=abc&token=x-y_z",
        "http://127.0.0.1:8080/up/abc?up=1",
        "HTTPS://Push.Example.ORG:8443/Path/With%2FEscape?q=a%20b&r=~!$&'()*+,;=:@/?",
        "https://example.com",
        "https://example.com?x=1",
        "https://example.com:443/",
        "https://example.com:0443/a",
        "http://example.com:80",
        "https://a..b/",
        "https://host_name.example/",
        "https://example.com.:8443/trailing-dot",
        "https://example.com/a/b/../c/./d",
        "https://example.com/?",
        "https://example.com//double//slash",
    ]

    /// Texts outside the plain form, read by Foundation (or not at all).
    static let other = [
        "https://user:password@example.com/path",
        "https://[2001:db8::1]:8443/path",
        "https://example.com/path#fragment",
        "https://ex%41mple.com/path",
        "https://example.com:/path",
        "https://example.com:123456/path",
        "https://example.com:99999/path",
        "https://example.com/path with space",
        "https://example.com/a|b",
        "https://example.com/%zz",
        "https://exämple.com/",
        "ftp://example.com/file",
        "mailto:someone@example.com",
        "https:example.com",
        "https://",
        "not a url at all",
        "",
        "https://example.com\\evil",
        "https://example.com@evil.example/",
    ]

    @Test(arguments: Self.plain)
    func thePlainFormIsReadWithoutFoundation(_ text: String) throws {
        #expect(PlainEndpointText(text) != nil, "read without Foundation")
        let read = try #require(PushEndpoint(text: text))
        let url = try #require(URL(string: text))
        #expect(Parts(read) == Parts(PushEndpoint(url)))
        #expect(read.url == url)
    }

    @Test(arguments: Self.other)
    func otherTextIsReadAsFoundationReadsIt(_ text: String) {
        #expect(PlainEndpointText(text) == nil, "left to Foundation")
        let read = PushEndpoint(text: text)
        let url = URL(string: text)
        #expect((read == nil) == (url == nil))
        if let read, let url {
            #expect(Parts(read) == Parts(PushEndpoint(url)))
        }
    }
}
