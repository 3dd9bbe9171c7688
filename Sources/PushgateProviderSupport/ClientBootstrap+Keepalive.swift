import NIOCore
public import NIOPosix
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ClientBootstrap {
    /// Seconds of idleness before the kernel's first keepalive probe.
    public static let keepaliveIdle: Int32 = 30
    /// Seconds between probes.
    public static let keepaliveInterval: Int32 = 10
    /// Unanswered probes after which the kernel ends the connection.
    public static let keepaliveProbes: Int32 = 3

    /// Kernel TCP keepalive on every connection the bootstrap makes: an idle connection whose peer is gone
    /// (a NAT or a load balancer that forgot it, a host that vanished) ends within about a minute
    /// (``keepaliveIdle`` + ``keepaliveProbes`` × ``keepaliveInterval`` seconds) instead of lingering
    /// until the next request meets it.
    public func outboundKeepalive() -> ClientBootstrap {
        var bootstrap = self.channelOption(.socketOption(.so_keepalive), value: 1)
        #if os(Linux)
        bootstrap = bootstrap
            .channelOption(.tcpOption(NIOBSDSocket.Option(rawValue: TCP_KEEPIDLE)), value: SocketOptionValue(Self.keepaliveIdle))
            .channelOption(.tcpOption(NIOBSDSocket.Option(rawValue: TCP_KEEPINTVL)), value: SocketOptionValue(Self.keepaliveInterval))
            .channelOption(.tcpOption(NIOBSDSocket.Option(rawValue: TCP_KEEPCNT)), value: SocketOptionValue(Self.keepaliveProbes))
        #endif
        return bootstrap
    }
}
