import NIOCore
import PushgateConfig
import PushgateCore

/// The read timeouts and connection cap of every listener, from `http:` and the process's
/// file-descriptor limit.
struct ListenerLimits: Sendable {
    var headerTimeout: Duration
    var bodyTimeout: Duration
    var idleTimeout: Duration
    var maxConnections: Int
    /// The largest request bodies collected.
    var bodyLimits: RequestBodyLimits

    /// The limits `http:` sets; without `max_connections`, the cap leaves room below the descriptor
    /// limit for the store, provider connections and files (at least 64, at most 16,384).
    init(_ settings: HTTPSettings, descriptorLimit: Int = FileDescriptorLimit.current) {
        self.headerTimeout = settings.headerTimeout
        self.bodyTimeout = settings.bodyTimeout
        self.idleTimeout = settings.idleTimeout
        self.maxConnections = settings.maxConnections ?? max(64, min(16_384, descriptorLimit - 512))
        self.bodyLimits = RequestBodyLimits(standard: settings.maxRequestBodySize)
    }

    /// The timeouts each connection's guard applies.
    var connectionGuard: HTTPConnectionGuard.Limits {
        func amount(_ duration: Duration) -> TimeAmount { .milliseconds(duration.wholeMilliseconds) }
        return HTTPConnectionGuard.Limits(
            headerTimeout: amount(self.headerTimeout), bodyTimeout: amount(self.bodyTimeout), idleTimeout: amount(self.idleTimeout)
        )
    }
}
