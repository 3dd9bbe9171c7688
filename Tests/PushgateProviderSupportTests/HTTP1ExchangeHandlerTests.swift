import NIOCore
import NIOEmbedded
@testable import PushgateProviderSupport
import Testing

/// One HTTP/1.1 connection's exchanges, on an embedded channel. Its deadlines are checked against the
/// real clock when their timer fires, so the tests move the loop's clock to the real time.
@Suite("HTTP/1.1 exchanges")
struct HTTP1ExchangeHandlerTests {
    static let request = ByteBuffer(string: "POST /push HTTP/1.1\r\nhost: push.example\r\ncontent-length: 0\r\n\r\n")

    /// A cancelled request asks its connection to end its exchange soon; by the time the loop runs that,
    /// its answer may be in and the connection carrying another request, whose deadline stays its own.
    @Test func shorteningAnAnsweredExchangesDeadlineLeavesTheNextRequestAlone() throws {
        let handler = HTTP1ExchangeHandler(bodyLimit: 1024)
        let channel = EmbeddedChannel(handler: handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        let loop = channel.embeddedEventLoop
        let first = loop.makePromise(of: HTTP1Answer.self)
        handler.send(Self.request, deadline: .now() + .seconds(30), promise: first)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"))
        #expect(try first.futureResult.wait().status == 200)

        let second = loop.makePromise(of: HTTP1Answer.self)
        var result: Result<HTTP1Answer, any Error>?
        second.futureResult.whenComplete { result = $0 }
        handler.send(Self.request, deadline: .now() + .seconds(30), promise: second)
        handler.shortenDeadline(to: .now(), of: first.futureResult)
        loop.advanceTime(to: .now() + .milliseconds(1))
        #expect(result == nil, "the first request's cancellation does not end the second's exchange")
        #expect(channel.isActive)

        // Its own cancellation does.
        handler.shortenDeadline(to: .now(), of: second.futureResult)
        loop.advanceTime(to: .now() + .milliseconds(1))
        guard case .failure(let error as HTTP1ExchangeError)? = result, case .deadlineExceeded = error else {
            Issue.record("expected the deadline to end the exchange, got \(String(describing: result))")
            return
        }
        _ = try? channel.finish()
    }
}
