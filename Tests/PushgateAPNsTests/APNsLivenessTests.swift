import NIOCore
import NIOEmbedded
@testable import PushgateAPNs
import Testing

/// How an APNs connection proves it is alive, on the event loop's virtual clock: PINGs after silence, a
/// connection given up when its PING goes unanswered, and new streams held back on a connection that has
/// been silent for the whole ping interval until it answers.
@Suite("APNs connection liveness")
struct APNsLivenessTests {
    static let liveness = APNsLiveness(pingInterval: .seconds(60), pingTimeout: .seconds(5))
    static let ping: UInt8 = 6
    static let headers: UInt8 = 1

    static func pings(_ frames: [HTTP2TestPeer.Frame]) -> [HTTP2TestPeer.Frame] {
        frames.filter { $0.type == Self.ping && !$0.has(0x1) && $0.streamID == 0 }
    }

    /// The server's ACK of `ping`: the same eight bytes, with the ACK flag.
    static func acknowledge(_ ping: HTTP2TestPeer.Frame, on peer: HTTP2TestPeer) throws {
        try peer.send(type: Self.ping, flags: 0x1, payload: Array(ping.payload.readableBytesView))
    }

    @Test func anIdleConnectionIsPingedAndStaysOpenWhenTheServerAnswers() throws {
        let peer = try HTTP2TestPeer.connected(liveness: Self.liveness)
        peer.advance(by: .seconds(59))
        #expect(Self.pings(try peer.read()).isEmpty)
        peer.advance(by: .seconds(3))
        let pings = Self.pings(try peer.read())
        try #require(pings.count == 1)
        #expect(pings[0].payload.readableBytes == 8)
        try Self.acknowledge(pings[0], on: peer)
        peer.advance(by: .seconds(10))
        #expect(peer.channel.isActive)
        // The ACK counts as hearing from the server: the next PING comes a whole interval later.
        #expect(Self.pings(try peer.read()).isEmpty)
        let box = APNsHTTP2HandlerTests.send(peer)
        #expect(try peer.read().filter { $0.type == Self.headers }.map(\.streamID) == [1])
        try peer.answer(1)
        #expect(box.answer?.status == 200)
    }

    @Test func anUnansweredPingEndsTheConnectionAndFailsTheStreamsThatWereOutAsLost() throws {
        let peer = try HTTP2TestPeer.connected(liveness: Self.liveness)
        let box = APNsHTTP2HandlerTests.send(peer)
        #expect(try peer.read().filter { $0.type == Self.headers }.count == 1)
        // Requests are out and nothing arrives: a PING within the ping timeout and half a check…
        peer.advance(by: .milliseconds(7_500))
        #expect(Self.pings(try peer.read()).count == 1)
        #expect(peer.channel.isActive && box.result == nil)
        // …and without its ACK, the connection is dead.
        peer.advance(by: .seconds(5))
        #expect(!peer.channel.isActive)
        #expect(box.error == .connectionLost("no PING ACK within 5.0 s"))
        #expect(peer.handler.isClosing)
    }

    @Test func aLateOrForeignAckDoesNotSaveTheConnection() throws {
        let peer = try HTTP2TestPeer.connected(liveness: Self.liveness)
        peer.advance(by: .seconds(62))
        try #require(Self.pings(try peer.read()).count == 1)
        try peer.send(type: Self.ping, flags: 0x1, payload: [1, 2, 3, 4, 5, 6, 7, 8])
        // A foreign ACK is still a frame heard, but not the answer: the PING's timer runs on.
        peer.advance(by: .seconds(5))
        #expect(!peer.channel.isActive)
    }

    @Test func aConnectionSilentForTheWholeIntervalHoldsNewStreamsUntilItAnswersAPing() throws {
        // Checks every 30 s; the last frame at 45 s, so the check at 90 s finds 45 s of silence and the one
        // at 120 s would PING: the request at 106 s, after 61 s of silence, must notice by itself.
        let liveness = APNsLiveness(pingInterval: .seconds(60), pingTimeout: .seconds(300))
        let peer = try HTTP2TestPeer.connected(liveness: liveness)
        peer.advance(by: .seconds(45))
        try peer.send(type: 8, payload: [0, 0, 0x10, 0])  // WINDOW_UPDATE: heard at 45 s
        peer.advance(by: .seconds(61))
        #expect(Self.pings(try peer.read()).isEmpty)
        let box = APNsHTTP2HandlerTests.send(peer)
        let frames = try peer.read()
        #expect(frames.filter { $0.type == Self.headers }.isEmpty)
        let pings = Self.pings(frames)
        try #require(pings.count == 1)
        try Self.acknowledge(pings[0], on: peer)
        #expect(try peer.read().filter { $0.type == Self.headers }.map(\.streamID) == [1])
        try peer.answer(1)
        #expect(box.answer?.status == 200)
    }

    @Test func streamsHeldForAPingThatGoesUnansweredWereNeverSentAndMayGoElsewhere() throws {
        let peer = try HTTP2TestPeer.connected(liveness: Self.liveness)
        peer.advance(by: .seconds(61))
        try #require(Self.pings(try peer.read()).count == 1)
        let box = APNsHTTP2HandlerTests.send(peer)
        #expect(try peer.read().filter { $0.type == Self.headers }.isEmpty)
        peer.advance(by: .seconds(5))
        #expect(box.error == .notProcessed("no PING ACK within 5.0 s"))
        #expect(!peer.channel.isActive)
    }

    @Test func aServerThatNeverSendsItsSettingsHasTheConnectionGivenUpAndItsWaitingStreamsNotProcessed() throws {
        let peer = try HTTP2TestPeer(liveness: APNsLiveness(pingInterval: .seconds(60), pingTimeout: .seconds(5), settingsTimeout: .seconds(10)))
        _ = try peer.read()
        let box = APNsHTTP2HandlerTests.send(peer, deadline: peer.channel.embeddedEventLoop.now + .seconds(60))
        #expect(try peer.read().filter { $0.type == Self.headers }.isEmpty, "no stream opens before the server's SETTINGS")
        peer.advance(by: .seconds(9))
        #expect(peer.channel.isActive && box.result == nil)
        #expect(Self.pings(try peer.read()).isEmpty, "no PING before SETTINGS")
        peer.advance(by: .seconds(2))
        #expect(!peer.channel.isActive)
        #expect(box.error == .notProcessed("no TLS handshake and SETTINGS from the server within 10.0 s of connecting"))
        #expect(peer.handler.isClosing)
    }

    @Test func settingsInTimeKeepTheConnection() throws {
        let peer = try HTTP2TestPeer.connected(liveness: APNsLiveness(pingInterval: .seconds(60), pingTimeout: .seconds(5), settingsTimeout: .seconds(10)))
        peer.advance(by: .seconds(30))
        #expect(peer.channel.isActive && !peer.handler.isClosing)
    }

    /// A request with a 2-second deadline on a connection whose PING timers are far off; `meanwhile`
    /// runs before the deadline passes. Returns the frames the client wrote after it.
    static func expireOneRequest(meanwhile: (HTTP2TestPeer) throws -> Void) throws -> [HTTP2TestPeer.Frame] {
        let peer = try HTTP2TestPeer.connected(liveness: APNsLiveness(pingInterval: .seconds(600), pingTimeout: .seconds(300)))
        let box = APNsHTTP2HandlerTests.send(peer, deadline: peer.channel.embeddedEventLoop.now + .seconds(2))
        _ = try peer.read()
        try meanwhile(peer)
        peer.advance(by: .seconds(3))
        #expect(box.error == .deadlineExceeded)
        return try peer.read()
    }

    @Test func aStreamThatHeardNothingBeforeItsDeadlineHasTheConnectionProbed() throws {
        let frames = try Self.expireOneRequest { _ in }
        #expect(frames.contains { $0.type == 3 && $0.streamID == 1 })  // RST_STREAM
        #expect(Self.pings(frames).count == 1)
    }

    @Test func aStreamAnsweredSlowlyButWithFramesMeanwhileDoesNotProbe() throws {
        // A WINDOW_UPDATE on the connection: a frame heard while the request was out.
        let frames = try Self.expireOneRequest { try $0.send(type: 8, payload: [0, 0, 0x10, 0]) }
        #expect(Self.pings(frames).isEmpty)
    }
}
