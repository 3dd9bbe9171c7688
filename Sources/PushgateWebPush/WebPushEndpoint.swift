public import Foundation
import PushgateProviderSupport

/// A subscription's endpoint, read once from its URL: what the endpoint policy, the VAPID signer and the
/// connection pool need of it for every delivery. Reading them from the `URL` on each delivery parsed it
/// again several times (about 30,000 instructions a Web Push delivery; callgrind).
public struct WebPushEndpoint: Sendable {
    /// The URL the notification is posted to.
    public let url: URL
    /// The scheme, lower-cased; nil when the URL has none.
    let scheme: String?
    /// The host as the URL gives it; nil when it has none or an empty one.
    let host: String?
    /// The `host[:port]` that `allowed_endpoints` is matched against (IPv6 hosts in brackets).
    let hostAndPort: String?
    /// The VAPID audience (`scheme://host[:port]`, the scheme's default port left out); nil without a
    /// scheme or host.
    let origin: String?
    /// Where the connection pool connects, with the request target and `Host` header; nil unless it is an
    /// `http` or `https` URL with a host.
    let destination: HTTP1ConnectionPool.Destination?

    /// Reads `url`'s parts.
    public init(_ url: URL) {
        self.url = url
        self.scheme = url.scheme?.lowercased()
        self.host = url.host.flatMap { $0.isEmpty ? nil : $0 }
        self.hostAndPort = WebPushEndpointPolicy.hostAndPort(of: url)
        self.origin = VAPIDSigner.origin(of: url)
        self.destination = HTTP1ConnectionPool.Destination(url)
    }
}
