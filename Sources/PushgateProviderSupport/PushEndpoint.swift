public import Foundation

/// A push endpoint URL (a Web Push subscription's endpoint, a UnifiedPush endpoint), read once: what the
/// endpoint policy and the connection pool need of it for every delivery. Reading them from the `URL` on
/// each delivery parsed it again several times (about 30,000 instructions a Web Push delivery; callgrind).
public struct PushEndpoint: Sendable {
    /// The URL the notification is posted to.
    public var url: URL {
        switch self.source {
        case .url(let url): url
        // Only text ``PlainEndpointText`` accepted is kept as text, and Foundation reads all of that.
        case .text(let text): URL(string: text)!
        }
    }
    /// What the endpoint was read from.
    private enum Source: Sendable {
        case url(URL)
        case text(String)
    }
    private let source: Source
    /// The scheme, lower-cased; nil when the URL has none.
    public let scheme: String?
    /// The host as the URL gives it; nil when it has none or an empty one.
    public let host: String?
    /// The `host[:port]` that `allowed_endpoints` is matched against (IPv6 hosts in brackets).
    public let hostAndPort: String?
    /// Where the connection pool connects, with the request target and `Host` header; nil unless it is an
    /// `http` or `https` URL with a host.
    public let destination: HTTP1ConnectionPool.Destination?
    /// The origin, `scheme://host[:port]` (``origin(of:)``); nil without a scheme or host.
    public let origin: String?

    /// Reads `url`'s parts.
    public init(_ url: URL) {
        self.source = .url(url)
        self.scheme = url.scheme?.lowercased()
        self.host = url.host.flatMap { $0.isEmpty ? nil : $0 }
        self.hostAndPort = Self.hostAndPort(of: url)
        self.destination = HTTP1ConnectionPool.Destination(url)
        self.origin = Self.origin(of: url)
    }

    /// Reads an endpoint given as text (a UnifiedPush pushkey); nil when it is not a URL at all.
    ///
    /// The plain form nearly every push service hands out (`http` or `https`, a host name or IPv4
    /// address, an optional port, then a path and query of URL characters only) is read here directly, in
    /// a fraction of what Foundation's URL parser costs (a twentieth of a UnifiedPush delivery's CPU
    /// time, parsed for every delivery to a new device); anything else (user info, IPv6 literals, a
    /// fragment, percent signs in the host, characters a URL must escape) goes through `URL(string:)`.
    /// Both give the same parts for the plain form (PushEndpointTests compares them).
    public init?(text: String) {
        if let plain = PlainEndpointText(text) {
            let scheme = plain.isTLS ? "https" : "http"
            let defaultPort = plain.isTLS ? 443 : 80
            let origin = HTTP1ConnectionPool.Origin(isTLS: plain.isTLS, host: plain.host, port: plain.port ?? defaultPort)
            // A plain host is a name or an IPv4 address: never in brackets.
            let lowered = plain.host.lowercased()
            self.init(
                source: .text(text), scheme: scheme, host: plain.host,
                hostAndPort: plain.port.map { "\(plain.host):\($0)" } ?? plain.host,
                destination: HTTP1ConnectionPool.Destination(origin: origin, target: plain.target),
                origin: "\(scheme)://" + (plain.port.map { $0 == defaultPort ? lowered : "\(lowered):\($0)" } ?? lowered)
            )
            return
        }
        guard let url = URL(string: text) else { return nil }
        self.init(url)
    }

    private init(
        source: Source, scheme: String?, host: String?, hostAndPort: String?, destination: HTTP1ConnectionPool.Destination?, origin: String?
    ) {
        self.source = source
        self.scheme = scheme
        self.host = host
        self.hostAndPort = hostAndPort
        self.destination = destination
        self.origin = origin
    }

    /// The origin of `url` as RFC 6454 serializes it, `scheme://host[:port]`: scheme and host lower-cased,
    /// an IPv6 host in brackets, the port only when it is not the scheme's default (the VAPID audience of
    /// RFC 8292 is this); nil without a scheme or host.
    public static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let bracketed = host.utf8.contains(UInt8(ascii: ":")) && !host.hasPrefix("[") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        if let port = url.port, port != defaultPort {
            return "\(scheme)://\(bracketed):\(port)"
        }
        return "\(scheme)://\(bracketed)"
    }

    /// The `host[:port]` that `allowed_endpoints` is matched against (IPv6 hosts in brackets); nil without
    /// a host.
    public static func hostAndPort(of url: URL) -> String? {
        guard var host = url.host, !host.isEmpty else { return nil }
        if host.utf8.contains(UInt8(ascii: ":")), !host.hasPrefix("[") { host = "[\(host)]" }
        return url.port.map { "\(host):\($0)" } ?? host
    }
}
