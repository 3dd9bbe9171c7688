import NIOCore
import NIOEmbedded
import NIOHPACK
@testable import PushgateAPNs
import Testing

/// The APNs client's HTTP/2 framing, frame by frame against a scripted server: the preface, stream limits,
/// both directions of flow control, PING, GOAWAY, resets, deadlines, and the protocol errors that end a
/// connection. (The provider's tests run it against NIOHTTP2's server, and aioapns' cross-check against h2.)
@Suite("APNs HTTP/2 framing")
struct APNsHTTP2HandlerTests {
    static func request(_ token: String = "a1", body: String = #"{"aps":{"alert":"Hi"}}"#) -> APNsRequest {
        APNsRequest(
            path: "/3/device/\(token)",
            headers: [
                ("authorization", "bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln"), ("apns-topic", "com.example.app"),
                ("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-id", "\(token)-id"),
            ],
            body: ByteBuffer(string: body))
    }

    static var soon: NIODeadline { .now() + .seconds(60) }

    /// Sends `request` and returns the box its answer arrives in.
    static func send(_ peer: HTTP2TestPeer, _ request: APNsRequest = request(), deadline: NIODeadline = soon) -> AnswerBox {
        let promise = peer.channel.eventLoop.makePromise(of: APNsAnswer.self)
        peer.handler.send(request, deadline: deadline, promise: promise)
        return AnswerBox(promise.futureResult)
    }

    @Test func requestsWaitForTheServersSettingsThenLeaveInOneWrite() throws {
        let peer = try HTTP2TestPeer()
        let preface = try peer.read()
        #expect(preface.map(\.type) == [4])
        #expect(Array(preface[0].payload.readableBytesView) == [0, 2, 0, 0, 0, 0])  // SETTINGS_ENABLE_PUSH 0

        let first = Self.send(peer)
        #expect(try peer.read().isEmpty)
        try peer.sendSettings([(3, 100)])
        let frames = try peer.read()
        #expect(peer.writes == 1)
        #expect(frames.map(\.type) == [4, 1, 0])
        #expect(frames[0].has(0x1) && frames[0].payload.readableBytes == 0)  // SETTINGS ACK
        let headers = frames[1]
        #expect(headers.streamID == 1 && headers.has(0x4) && !headers.has(0x1))
        #expect(headers.headers.map(\.name) == [
            ":method", ":scheme", ":path", ":authority", "authorization", "apns-topic", "apns-push-type", "apns-priority",
            "apns-id", "content-length",
        ])
        #expect(headers.headers.map(\.value) == [
            "POST", "https", "/3/device/a1", "api.example", "bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln", "com.example.app", "alert",
            "10", "a1-id", "22",
        ])
        #expect(frames[2].streamID == 1 && frames[2].has(0x1))
        #expect(String(buffer: frames[2].payload) == #"{"aps":{"alert":"Hi"}}"#)

        try peer.answer(1, status: 200)
        #expect(first.answer?.status == 200)

        // The second request's repeating headers are table indices: the block is much shorter, and reads the
        // same through the server's decoder.
        let second = Self.send(peer, Self.request("b2"))
        let next = try peer.read()
        #expect(next.map(\.type) == [1, 0])
        #expect(next[0].streamID == 3)
        #expect(next[0].header(":path") == "/3/device/b2" && next[0].header("authorization") == "bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
        #expect(next[0].payload.readableBytes < headers.payload.readableBytes / 2)
        try peer.answer(3, status: 400, endStream: false)
        try peer.send(type: 0, flags: 0x1, streamID: 3, payload: Array(#"{"reason":"BadDeviceToken"}"#.utf8))
        #expect(second.answer?.status == 400)
        #expect(second.answer.map { String(buffer: $0.body) } == #"{"reason":"BadDeviceToken"}"#)
    }

    @Test func theServersStreamLimitMakesRequestsWaitInOrder() throws {
        let peer = try HTTP2TestPeer.connected([(3, 1)])
        let boxes = (0..<3).map { _ in Self.send(peer) }
        #expect(try peer.read().filter { $0.type == 1 }.map(\.streamID) == [1])
        try peer.answer(1)
        #expect(boxes[0].answer?.status == 200)
        #expect(try peer.read().filter { $0.type == 1 }.map(\.streamID) == [3])
        try peer.send(type: 3, streamID: 3, payload: [0, 0, 0, 7])  // REFUSED_STREAM
        #expect(boxes[1].error == .notProcessed("REFUSED_STREAM"))
        #expect(try peer.read().filter { $0.type == 1 }.map(\.streamID) == [5])
        try peer.send(type: 3, streamID: 5, payload: [0, 0, 0, 2])  // INTERNAL_ERROR
        #expect(boxes[2].error == .streamReset("INTERNAL_ERROR"))
    }

    @Test func aLowerStreamLimitMidConnectionHoldsNewStreamsUntilEnoughClose() throws {
        let peer = try HTTP2TestPeer.connected([(3, 10)])
        let boxes = (0..<3).map { _ in Self.send(peer) }
        #expect(try peer.read().filter { $0.type == 1 }.map(\.streamID) == [1, 3, 5])
        // The server lowers SETTINGS_MAX_CONCURRENT_STREAMS to 2 with three streams open (RFC 9113 §6.5.2).
        try peer.sendSettings([(3, 2)])
        let fourth = Self.send(peer)
        #expect(try peer.read().filter { $0.type == 1 }.isEmpty)
        try peer.answer(1)
        #expect(try peer.read().filter { $0.type == 1 }.isEmpty)  // two still open: at the limit
        try peer.answer(3)
        #expect(try peer.read().filter { $0.type == 1 }.map(\.streamID) == [7])
        try peer.answer(5)
        try peer.answer(7)
        #expect(boxes.allSatisfy { $0.answer?.status == 200 } && fourth.answer?.status == 200)
    }

    @Test func aBodyWaitsForTheStreamsWindow() throws {
        let peer = try HTTP2TestPeer.connected([(4, 10)])  // SETTINGS_INITIAL_WINDOW_SIZE
        let box = Self.send(peer, Self.request(body: String(repeating: "x", count: 25)))
        var data = try peer.read().filter { $0.type == 0 }
        #expect(data.map(\.payload.readableBytes) == [10] && !data[0].has(0x1))
        try peer.send(type: 8, streamID: 1, payload: [0, 0, 0, 10])
        data = try peer.read().filter { $0.type == 0 }
        #expect(data.map(\.payload.readableBytes) == [10] && !data[0].has(0x1))
        // A smaller initial window puts the stream's window below zero: nothing more until it is positive.
        try peer.sendSettings([(4, 5)])
        #expect(try peer.read().filter { $0.type == 0 }.isEmpty)
        try peer.send(type: 8, streamID: 1, payload: [0, 0, 0, 5])
        #expect(try peer.read().filter { $0.type == 0 }.isEmpty)
        try peer.send(type: 8, streamID: 1, payload: [0, 0, 0, 100])
        data = try peer.read().filter { $0.type == 0 }
        #expect(data.map(\.payload.readableBytes) == [5] && data[0].has(0x1))
        try peer.answer(1)
        #expect(box.answer?.status == 200)
    }

    @Test func aBodyWaitsForTheConnectionsWindowInFramesOfTheServersSize() throws {
        let peer = try HTTP2TestPeer.connected([(4, 1 << 20)])
        _ = Self.send(peer, Self.request(body: String(repeating: "y", count: 70_000)))
        var data = try peer.read().filter { $0.type == 0 }
        #expect(data.map(\.payload.readableBytes) == [16_384, 16_384, 16_384, 16_383])  // the connection's 65,535
        try peer.send(type: 8, payload: [0, 0, 0x20, 0])  // 8,192 more
        data = try peer.read().filter { $0.type == 0 }
        #expect(data.map(\.payload.readableBytes) == [4_465] && data[0].has(0x1))
    }

    @Test func pingIsAnsweredAndTheServersDataIsReturnedAsWindow() throws {
        let peer = try HTTP2TestPeer.connected()
        try peer.send(type: 6, payload: [1, 2, 3, 4, 5, 6, 7, 8])
        let ping = try peer.read()
        #expect(ping.map(\.type) == [6] && ping[0].has(0x1) && Array(ping[0].payload.readableBytesView) == [1, 2, 3, 4, 5, 6, 7, 8])

        let box = Self.send(peer)
        _ = try peer.read()
        try peer.answer(1, status: 500, endStream: false)
        for _ in 0..<3 {
            try peer.send(type: 0, streamID: 1, payload: [UInt8](repeating: 0x61, count: 12_000))
        }
        let updates = try peer.read().filter { $0.type == 8 }
        // 36,000 bytes: over half of each window, so both are topped up again.
        #expect(Set(updates.map(\.streamID)) == [0, 1])
        #expect(updates.allSatisfy { $0.payload.getInteger(at: $0.payload.readerIndex, as: UInt32.self) == 36_000 })
        try peer.send(type: 0, flags: 0x1, streamID: 1)
        #expect(box.answer?.status == 500)
        #expect(box.answer?.body.readableBytes == APNsHTTP2Handler.maximumAnswerBody)
    }

    @Test func anAnswerHeadInContinuationFramesWithPaddingAndPriority() throws {
        let peer = try HTTP2TestPeer.connected()
        let box = Self.send(peer)
        _ = try peer.read()
        let block = try peer.block([(":status", "429"), ("retry-after", "120"), ("apns-id", "x")])
        // HEADERS: PADDED | PRIORITY, the first two bytes of the block; CONTINUATION: the rest.
        try peer.send(type: 1, flags: 0x8 | 0x20 | 0x1, streamID: 1, payload: [3] + [0, 0, 0, 0, 16] + block.prefix(2) + [0, 0, 0])
        #expect(box.result == nil)
        try peer.send(type: 9, flags: 0x4, streamID: 1, payload: Array(block.dropFirst(2)))
        #expect(box.answer?.status == 429)
        #expect(box.answer?.retryAfter == "120")
    }

    @Test func goAwayFailsWhatTheServerDidNotProcessAndTheConnectionClosesWhenIdle() throws {
        let peer = try HTTP2TestPeer.connected([(3, 2)])
        let boxes = (0..<3).map { _ in Self.send(peer) }
        _ = try peer.read()
        try peer.send(type: 7, payload: [0, 0, 0, 1, 0, 0, 0, 0])  // last stream 1, NO_ERROR
        #expect(peer.handler.isClosing)
        #expect(boxes[1].error == .notProcessed("GOAWAY NO_ERROR"))
        #expect(boxes[2].error == .notProcessed("GOAWAY NO_ERROR"))  // never opened
        #expect(boxes[0].result == nil)
        let late = Self.send(peer)
        #expect(late.error == .notProcessed("connection is closing"))
        #expect(peer.channel.isActive)
        try peer.answer(1)
        #expect(boxes[0].answer?.status == 200)
        peer.channel.embeddedEventLoop.run()
        #expect(!peer.channel.isActive)
    }

    @Test func aPassedDeadlineResetsTheStreamAndAWaitingRequestLeavesNoTrace() throws {
        // Liveness out of the way: half a minute without a frame would otherwise have the connection PINGed.
        let peer = try HTTP2TestPeer.connected([(3, 1)], liveness: APNsLiveness(pingInterval: .hours(1), pingTimeout: .hours(1)))
        let deadline = peer.channel.embeddedEventLoop.now + .seconds(30)
        let open = Self.send(peer, deadline: deadline + .seconds(1))
        let waiting = Self.send(peer, deadline: deadline)
        let third = Self.send(peer, deadline: deadline + .seconds(60))
        _ = try peer.read()
        peer.channel.embeddedEventLoop.advanceTime(to: deadline + .seconds(2))
        #expect(open.error == .deadlineExceeded)
        #expect(waiting.error == .deadlineExceeded)
        let frames = try peer.read()
        // Stream 1 is reset; stream 3 never existed for the server; the third request takes stream 5.
        #expect(frames.filter { $0.type == 3 }.map(\.streamID) == [1])
        #expect(frames.first { $0.type == 3 }.map { Array($0.payload.readableBytesView) } == [0, 0, 0, 8])  // CANCEL
        #expect(frames.filter { $0.type == 1 }.map(\.streamID) == [5])
        // A late answer on the reset stream is read and dropped.
        try peer.answer(1)
        try peer.answer(5)
        #expect(third.answer?.status == 200)
    }

    /// A server that holds SETTINGS_MAX_CONCURRENT_STREAMS at 0 and answers PINGs: every request ends at
    /// its deadline, and the queue does not keep the ended ones (each with its headers and body).
    @Test func requestsThatEndWhileWaitingDoNotStayQueued() throws {
        let peer = try HTTP2TestPeer.connected([(3, 0)], liveness: APNsLiveness(pingInterval: .hours(1), pingTimeout: .hours(1)))
        let deadline = peer.channel.embeddedEventLoop.now + .seconds(1)
        let boxes = (0..<100).map { _ in Self.send(peer, deadline: deadline) }
        peer.channel.embeddedEventLoop.advanceTime(to: deadline + .seconds(1))
        #expect(boxes.allSatisfy { $0.error == .deadlineExceeded })
        #expect(peer.handler.waiting.count < 50, "\(peer.handler.waiting.count) ended requests still queued")
        // The server lifts its limit: a new request goes at once, and none of the ended ones.
        try peer.sendSettings([(3, 10)])
        let next = Self.send(peer, deadline: deadline + .seconds(60))
        let frames = try peer.read()
        #expect(frames.filter { $0.type == 1 }.count == 1)
        try peer.answer(frames.first { $0.type == 1 }?.streamID ?? 0)
        #expect(next.answer?.status == 200)
    }

    /// Frames that end the connection, with the GOAWAY code the client sends.
    static let protocolErrors: [(String, ByteBuffer, UInt32)] = [
        ("a preface that is not SETTINGS", HTTP2TestPeer.frame(type: 6, payload: [UInt8](repeating: 0, count: 8)), 1),
        ("DATA on stream 0", HTTP2TestPeer.frame(type: 0, payload: [1]), 1),
        ("PUSH_PROMISE", HTTP2TestPeer.frame(type: 5, flags: 0x4, streamID: 1, payload: [0, 0, 0, 2]), 1),
        ("a frame over 16,384 bytes", HTTP2TestPeer.frame(type: 0, streamID: 1, payload: [UInt8](repeating: 0, count: 16_385)), 6),
        ("SETTINGS of 5 bytes", HTTP2TestPeer.frame(type: 4, payload: [0, 1, 0, 0, 0]), 6),
        ("a WINDOW_UPDATE of 0", HTTP2TestPeer.frame(type: 8, payload: [0, 0, 0, 0]), 1),
        ("a connection window over 2^31-1", HTTP2TestPeer.frame(type: 8, payload: [0x7F, 0xFF, 0xFF, 0xFF]), 3),
        ("CONTINUATION without HEADERS", HTTP2TestPeer.frame(type: 9, flags: 0x4, streamID: 1, payload: [0x88]), 1),
        ("an undecodable header block", HTTP2TestPeer.frame(type: 1, flags: 0x5, streamID: 1, payload: [0xFF]), 9),
        ("SETTINGS_MAX_FRAME_SIZE below 16,384", HTTP2TestPeer.frame(type: 4, payload: [0, 5, 0, 0, 0x10, 0]), 1),
    ]

    @Test(arguments: 0..<Self.protocolErrors.count)
    func aProtocolErrorEndsTheConnectionWithGoAway(_ index: Int) throws {
        let (what, frame, code) = Self.protocolErrors[index]
        let peer = try HTTP2TestPeer()
        _ = try peer.read()
        var bytes = ByteBuffer()
        if index > 0 {
            // After the server's SETTINGS, with a request out.
            bytes = HTTP2TestPeer.frame(type: 4)
        }
        let box = Self.send(peer)
        var bad = frame
        bytes.writeBuffer(&bad)
        try peer.send(bytes)
        let frames = try peer.read()
        let goAway = try #require(frames.first { $0.type == 7 }, "\(what)")
        #expect(goAway.payload.getInteger(at: goAway.payload.readerIndex + 4, as: UInt32.self) == code, "\(what)")
        #expect(!peer.channel.isActive, "\(what)")
        // Before the server's SETTINGS the request never left: not processed, so it is sent again.
        switch (index, box.error) {
        case (0, .notProcessed(let why)), (1..., .connectionLost(let why)):
            #expect(why.hasPrefix("HTTP/2 "), "\(what)")
        default:
            Issue.record("\(what): \(String(describing: box.result))")
        }
    }
}

/// HPACK as the APNs client writes it, read back by NIOHPACK's decoder.
@Suite("APNs header blocks")
struct APNsHeaderBlockEncoderTests {
    @Test func blocksReadBackAcrossTableChangesAndEvictions() throws {
        var encoder = APNsHeaderBlockEncoder()
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        for number in 0..<200 {
            // A new provider token every 20 requests fills the table and pushes out old entries; the peer's
            // table size changes twice between two blocks at 50, and to 0 for a while at 100.
            if number == 50 {
                encoder.setPeerTableSize(100)
                encoder.setPeerTableSize(8_192)
            }
            if number == 100 { encoder.setPeerTableSize(0) }
            if number == 120 { encoder.setPeerTableSize(2_048) }
            let headers: [(name: String, value: String)] = [
                ("authorization", "bearer " + String(repeating: Character(UnicodeScalar(UInt8(65 + number / 20))), count: 600)),
                ("apns-topic", "com.example.app"), ("apns-push-type", number.isMultiple(of: 3) ? "background" : "alert"),
                ("apns-id", "id-\(number)"), ("apns-collapse-id", "c\(number % 7)"), ("content-type", "application/json"),
            ]
            var block = ByteBuffer()
            encoder.encodeRequest(path: "/3/device/\(number)", authority: "api.push.apple.com", headers: headers, contentLength: number, into: &block)
            if number == 50 { #expect(block.getBytes(at: block.readerIndex, length: 4) == [0x3F, 0x45, 0x3F, 0xE1]) }  // 100, then 4,096
            if number == 100 { #expect(block.getInteger(at: block.readerIndex, as: UInt8.self) == 0x20) }  // 0
            let decoded = try decoder.decodeHeaders(from: &block).map { [$0.name, $0.value] }
            let expected = [[":method", "POST"], [":scheme", "https"], [":path", "/3/device/\(number)"], [":authority", "api.push.apple.com"]]
                + headers.map { [$0.name, $0.value] } + [["content-length", String(number)]]
            #expect(decoded == expected, "request \(number)")
        }
    }
}
