public import Foundation

/// A push endpoint URL (a Web Push subscription's endpoint, a UnifiedPush endpoint), read once: what the
/// endpoint policy and the connection pool need of it for every delivery. Reading them from the `URL` on
/// each delivery parsed it again several times (about 30,000 instructions a Web Push delivery; callgrind).
public struct PushEndpoint: Sendable {
    /// The URL the notification is posted to.
    public let url: URL
    /// The scheme, lower-cased; nil when the URL has none.
    public let scheme: String?
    /// The host as the URL gives it; nil when it has none or an empty one.
    public let host: String?
    /// The `host[:port]` that `allowed_endpoints` is matched against (IPv6 hosts in brackets).
    public let hostAndPort: String?
    /// Where the connection pool connects, with the request target and `Host` header; nil unless it is an
    /// `http` or `https` URL with a host.
    public let destination: HTTP1ConnectionPool.Destination?

    /// Reads `url`'s parts.
    public init(_ url: URL) {
        self.url = url
        self.scheme = url.scheme?.lowercased()
        self.host = url.host.flatMap { $0.isEmpty ? nil : $0 }
        self.hostAndPort = Self.hostAndPort(of: url)
        self.destination = HTTP1ConnectionPool.Destination(url)
    }

    /// The `host[:port]` that `allowed_endpoints` is matched against (IPv6 hosts in brackets); nil without
    /// a host.
    public static func hostAndPort(of url: URL) -> String? {
        guard var host = url.host, !host.isEmpty else { return nil }
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        return url.port.map { "\(host):\($0)" } ?? host
    }
}
