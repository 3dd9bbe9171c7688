public import AsyncHTTPClient
import Foundation
import PushgateCore

/// The HTTP proxy provider requests go through (Sygnal's `proxy` key, else `HTTPS_PROXY`): an
/// `http://[user:password@]host[:port]` URL, used with HTTP CONNECT; port 80 by default; a user name
/// without a password is ignored, as Sygnal ignores it.
public struct OutboundProxy: Sendable, Equatable, CustomStringConvertible {
    /// The proxy's host.
    public let host: String
    /// The proxy's port.
    public let port: Int
    /// Basic credentials, when both parts are given.
    public let credentials: (username: String, password: String)?

    /// Reads a proxy URL; nil when it is not an `http://` URL with a host.
    public init?(url: String) {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "http",
            let host = components.encodedHost, !host.isEmpty, TCPPort.connectable.contains(components.port ?? 80)
        else { return nil }
        self.host = host
        self.port = components.port ?? 80
        if let user = components.user?.removingPercentEncoding, let password = components.password?.removingPercentEncoding {
            self.credentials = (user, password)
        } else {
            self.credentials = nil
        }
    }

    /// The proxy named by `HTTPS_PROXY` (or `https_proxy`), if any.
    public static func fromEnvironment(_ environment: [String: String]) -> OutboundProxy? {
        (environment["HTTPS_PROXY"] ?? environment["https_proxy"]).flatMap(OutboundProxy.init(url:))
    }

    /// The setting for an AsyncHTTPClient configuration.
    public var clientProxy: HTTPClient.Configuration.Proxy {
        .server(host: self.host, port: self.port, authorization: self.credentials.map { .basic(username: $0.username, password: $0.password) })
    }

    /// `host:port`, without credentials.
    public var description: String { "\(self.host):\(self.port)" }

    public static func == (lhs: OutboundProxy, rhs: OutboundProxy) -> Bool {
        lhs.host == rhs.host && lhs.port == rhs.port && lhs.credentials?.username == rhs.credentials?.username
            && lhs.credentials?.password == rhs.credentials?.password
    }
}
