public import Foundation
public import PushgateProviderSupport

/// A subscription's endpoint, read once from its URL: what the endpoint policy, the VAPID signer and the
/// connection pool need of it for every delivery.
public struct WebPushEndpoint: Sendable {
    /// The parts the endpoint policy and the connection pool read.
    public let endpoint: PushEndpoint
    /// The VAPID audience (`scheme://host[:port]`, the scheme's default port left out); nil without a
    /// scheme or host.
    var origin: String? { self.endpoint.origin }

    /// Reads `url`'s parts.
    public init(_ url: URL) {
        self.init(PushEndpoint(url))
    }

    /// Takes the parts of an endpoint read already (``PushEndpoint/init(text:)`` for a subscription's).
    init(_ endpoint: PushEndpoint) {
        self.endpoint = endpoint
    }

    /// The URL the notification is posted to.
    public var url: URL { self.endpoint.url }
    /// The scheme, lower-cased; nil when the URL has none.
    var scheme: String? { self.endpoint.scheme }
    /// The `host[:port]` that `allowed_endpoints` is matched against.
    var hostAndPort: String? { self.endpoint.hostAndPort }
    /// Where the connection pool connects; nil unless it is an `http` or `https` URL with a host.
    var destination: HTTP1ConnectionPool.Destination? { self.endpoint.destination }
}
