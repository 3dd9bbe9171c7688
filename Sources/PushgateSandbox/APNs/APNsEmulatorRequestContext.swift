public import Hummingbird
public import NIOCore
import Synchronization

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
        self.httpVersion = Self.httpVersion(of: source.channel)
    }

    /// The answer for each channel type seen so far.
    private static let versions = Mutex<[ObjectIdentifier: String]>([:])

    /// HTTP/2 requests arrive on NIOHTTP2's stream child channels; the type is internal to NIOHTTP2, so it
    /// is recognised by name (once per type: naming a type is slow).
    private static func httpVersion(of channel: any Channel) -> String {
        let type = ObjectIdentifier(Swift.type(of: channel))
        if let known = Self.versions.withLock({ $0[type] }) { return known }
        let version = String(describing: Swift.type(of: channel)).contains("HTTP2") ? "2" : "1.1"
        Self.versions.withLock { $0[type] = version }
        return version
    }
}
