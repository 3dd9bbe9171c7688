public import Hummingbird
public import NIOCore

/// The request context of the APNs emulator: Hummingbird's core context plus the HTTP version the
/// request arrived over, which the emulator records (APNs serves HTTP/2 only).
public struct APNsEmulatorRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// `2` for a request on an HTTP/2 stream, `1.1` otherwise.
    public let httpVersion: String
    /// The channel the request arrived on (an HTTP/2 stream; its parent is the TLS connection).
    public let channel: any Channel

    /// Creates the context for a request on `source.channel`.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
        // HTTP/2 requests arrive on NIOHTTP2's stream child channels; the type is internal to NIOHTTP2,
        // so it is recognised by name.
        self.httpVersion = String(describing: type(of: source.channel)).contains("HTTP2") ? "2" : "1.1"
    }
}
