public import Hummingbird
public import NIOCore

/// The request context of every Pushgate route: Hummingbird's core storage, the body limit in force and
/// the client's address (for rate limits and access logs).
public struct GatewayRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The largest request body a handler may collect; set from `http.max_request_body_size`.
    public var maxUploadSize: Int
    /// The peer that sent the request.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.maxUploadSize = HTTPSettingsDefaults.maxRequestBodySize
        self.remoteAddress = source.channel.remoteAddress
    }
}

/// Defaults that hold before the body-limit middleware has run.
public enum HTTPSettingsDefaults {
    public static let maxRequestBodySize = 1 << 20
}
