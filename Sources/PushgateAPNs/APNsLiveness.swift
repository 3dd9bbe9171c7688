public import NIOCore

/// How an APNs connection proves it is alive: a PING when it has been silent for ``pingInterval`` (and
/// before a connection silent that long takes new streams), or when requests are out and nothing at all
/// has arrived for ``pingTimeout``; a PING without its ACK within ``pingTimeout`` marks the connection
/// dead. Read from an app's `ping_interval` and `ping_timeout` (seconds).
public struct APNsLiveness: Sendable, Equatable {
    /// Silence after which an idle connection is probed (default 60 s).
    public var pingInterval: TimeAmount
    /// How long a PING may go unanswered, and how long requests may wait without hearing anything before
    /// a PING is sent (default 5 s).
    public var pingTimeout: TimeAmount

    /// How long after the TCP connection opens the TLS handshake and the server's SETTINGS may take: a
    /// server that accepts and then says nothing (a proxy whose upstream is gone, a hung load balancer)
    /// has no PING answered either, so the connection is given up then (default 10 s).
    public var settingsTimeout: TimeAmount

    /// Creates the settings.
    public init(pingInterval: TimeAmount = .seconds(60), pingTimeout: TimeAmount = .seconds(5), settingsTimeout: TimeAmount = .seconds(10)) {
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.settingsTimeout = settingsTimeout
    }

    /// How often a connection looks at its silence: half the shorter of the two, at least 10 ms, so a
    /// silence is noticed at most that late.
    var checkInterval: TimeAmount {
        max(.milliseconds(10), .nanoseconds(min(self.pingInterval, self.pingTimeout).nanoseconds / 2))
    }
}

/// What a connection tells its owner about its liveness (for metrics and the log).
enum APNsLivenessEvent: Sendable {
    /// A PING left.
    case pingSent
    /// A PING went unanswered: the connection is given up as dead.
    case pingMissed
}
