import NIOCore
import NIOEmbedded
import NIOHPACK
@testable import PushgateAPNs

/// The server's side of an ``APNsHTTP2Handler`` on an `EmbeddedChannel`: it reads the frames the client
/// wrote (header blocks decoded by NIOHPACK's decoder) and writes frames to it, byte by byte as RFC 9113
/// lays them out.
final class HTTP2TestPeer {
    struct Frame {
        var type: UInt8
        var flags: UInt8
        var streamID: UInt32
        var payload: ByteBuffer
        /// The decoded header block of a HEADERS frame.
        var headers: [(name: String, value: String)] = []

        func has(_ flag: UInt8) -> Bool { self.flags & flag != 0 }
        func header(_ name: String) -> String? { self.headers.first { $0.name == name }?.value }
    }

    let channel: EmbeddedChannel
    let handler: APNsHTTP2Handler
    /// How many buffers the client wrote in the last ``read()``.
    private(set) var writes = 0
    private var received = ByteBuffer()
    private var prefaceRead = false
    private var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
    private var encoder = HPACKEncoder(allocator: ByteBufferAllocator())

    init(authority: String = "api.example", liveness: APNsLiveness = APNsLiveness()) throws {
        self.handler = APNsHTTP2Handler(authority: authority, liveness: liveness)
        self.channel = EmbeddedChannel(handler: self.handler)
        try self.channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
    }

    /// A peer whose client has sent its preface and been sent the server's `settings` (and has answered
    /// them): the frames up to there are read.
    static func connected(_ settings: [(UInt16, UInt32)] = [], liveness: APNsLiveness = APNsLiveness()) throws -> HTTP2TestPeer {
        let peer = try HTTP2TestPeer(liveness: liveness)
        _ = try peer.read()
        try peer.sendSettings(settings)
        _ = try peer.read()
        return peer
    }

    /// Runs the event loop's pending work and returns the whole frames the client wrote since the last call.
    func read() throws -> [Frame] {
        self.channel.embeddedEventLoop.run()
        self.writes = 0
        while var buffer = try self.channel.readOutbound(as: ByteBuffer.self) {
            self.writes += 1
            self.received.writeBuffer(&buffer)
        }
        if !self.prefaceRead {
            let preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
            guard self.received.readString(length: preface.utf8.count) == preface else { throw PeerError.noPreface }
            self.prefaceRead = true
        }
        var frames: [Frame] = []
        while self.received.readableBytes >= 9 {
            let start = self.received.readerIndex
            let length = Int(self.received.getInteger(at: start, as: UInt16.self)!) << 8 | Int(self.received.getInteger(at: start + 2, as: UInt8.self)!)
            guard self.received.readableBytes >= 9 + length else { break }
            self.received.moveReaderIndex(forwardBy: 3)
            let type = self.received.readInteger(as: UInt8.self)!
            let flags = self.received.readInteger(as: UInt8.self)!
            let streamID = self.received.readInteger(as: UInt32.self)! & 0x7FFF_FFFF
            var frame = Frame(type: type, flags: flags, streamID: streamID, payload: self.received.readSlice(length: length)!)
            if type == 1 {
                var block = frame.payload
                frame.headers = try self.decoder.decodeHeaders(from: &block).map { ($0.name, $0.value) }
            }
            frames.append(frame)
        }
        return frames
    }

    /// Moves the event loop's clock on by `amount`, running the timers that come due.
    func advance(by amount: TimeAmount) {
        self.channel.embeddedEventLoop.advanceTime(by: amount)
    }

    /// Writes raw bytes to the client.
    func send(_ bytes: ByteBuffer) throws {
        try self.channel.writeInbound(bytes)
        self.channel.embeddedEventLoop.run()
    }

    /// Writes one frame to the client.
    func send(type: UInt8, flags: UInt8 = 0, streamID: UInt32 = 0, payload: [UInt8] = []) throws {
        try self.send(Self.frame(type: type, flags: flags, streamID: streamID, payload: payload))
    }

    static func frame(type: UInt8, flags: UInt8 = 0, streamID: UInt32 = 0, payload: [UInt8] = []) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt16(payload.count >> 8))
        buffer.writeInteger(UInt8(payload.count & 0xFF))
        buffer.writeInteger(type)
        buffer.writeInteger(flags)
        buffer.writeInteger(streamID)
        buffer.writeBytes(payload)
        return buffer
    }

    /// SETTINGS with `settings` (identifier, value).
    func sendSettings(_ settings: [(UInt16, UInt32)] = []) throws {
        var payload = ByteBuffer()
        for (identifier, value) in settings {
            payload.writeInteger(identifier)
            payload.writeInteger(value)
        }
        try self.send(type: 4, payload: Array(payload.readableBytesView))
    }

    /// A header block of `headers`, encoded by NIOHPACK's encoder (Huffman and all).
    func block(_ headers: [(String, String)]) throws -> [UInt8] {
        var buffer = ByteBuffer()
        try self.encoder.encode(headers: HPACKHeaders(headers), to: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// An answer head: HEADERS with `:status` and an `apns-id`, ending the stream unless a body follows.
    func answer(_ streamID: UInt32, status: Int = 200, endStream: Bool = true, extra: [(String, String)] = []) throws {
        let block = try self.block([(":status", String(status)), ("apns-id", "00000000-0000-0000-0000-00000000000\(streamID % 10)")] + extra)
        try self.send(type: 1, flags: 0x4 | (endStream ? 0x1 : 0), streamID: streamID, payload: block)
    }

    enum PeerError: Error { case noPreface }
}

/// A promise's result, once it has one. (Set and read on the test's thread: an `EmbeddedChannel`'s loop
/// runs its callbacks there.)
final class AnswerBox: @unchecked Sendable {
    var result: Result<APNsAnswer, any Error>?

    init(_ future: EventLoopFuture<APNsAnswer>) {
        future.whenComplete { self.result = $0 }
    }

    var answer: APNsAnswer? { try? self.result?.get() }
    var error: APNsExchangeError? {
        if case .failure(let error) = self.result { return error as? APNsExchangeError }
        return nil
    }
}
