import NIOCore
import NIOEmbedded
import PushgateProviderSupport
import Testing

/// The CONNECT tunnel's wait ends at the connection's deadline, which the TCP connect to the proxy already
/// spent part of, not a whole timeout after the CONNECT was sent.
@Suite("outbound proxy tunnel")
struct OutboundProxyTunnelTests {
    @Test func aProxyThatDoesNotAnswerFailsTheTunnelAtTheConnectionsDeadline() throws {
        let proxy = try #require(OutboundProxy(url: "http://127.0.0.1:3128"))
        let channel = EmbeddedChannel()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 3128)).wait()
        // The TCP connect took 900 ms of the connection's second.
        let opened = channel.embeddedEventLoop.now + .milliseconds(100)
        let tunnel = OutboundProxyTunnel.open(on: channel, to: "push.example.org", port: 443, through: proxy, deadline: opened)
        let failure = FailureBox()
        tunnel.whenFailure { failure.error = $0 }
        let request = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: request).hasPrefix("CONNECT push.example.org:443 HTTP/1.1"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(99))
        #expect(failure.error == nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(2))
        #expect(failure.error != nil, "the proxy's silence ends the tunnel at the deadline")
        #expect(!channel.isActive)
    }
}

/// The tunnel's failure, set on the embedded loop (the test's own thread).
private final class FailureBox: @unchecked Sendable {
    var error: (any Error)?
}
