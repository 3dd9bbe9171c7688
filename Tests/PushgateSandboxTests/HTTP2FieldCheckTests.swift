import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
@testable import PushgateSandbox
import Testing

/// The APNs emulator checks header blocks itself (``HTTP2FieldCheck``), with NIOHTTP2's own check turned
/// off: each block here must be refused by one exactly when NIOHTTP2's server, checking for itself, resets
/// the stream.
@Suite("HTTP/2 field checks")
struct HTTP2FieldCheckTests {
    static let request: [(String, String)] = [
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/abc"), (":authority", "api.push.apple.com"),
        ("authorization", "bearer eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.c2ln"), ("apns-topic", "im.example.ios"),
        ("apns-push-type", "alert"), ("content-length", "12"),
    ]

    /// Request header blocks: each is the request above with one change.
    static let requests: [(String, [(String, String)])] = {
        func with(_ change: (inout [(String, String)]) -> Void) -> [(String, String)] {
            var fields = Self.request
            change(&fields)
            return fields
        }
        var cases: [(String, [(String, String)])] = [
            ("as sent", Self.request),
            ("no authority", with { $0.remove(at: 3) }),
            ("no path", with { $0.remove(at: 2) }),
            ("no scheme", with { $0.remove(at: 1) }),
            ("no method", with { $0.remove(at: 0) }),
            ("empty path", with { $0[2].1 = "" }),
            ("path with a space", with { $0[2].1 = "/3/device/a b" }),
            ("path with a tab", with { $0[2].1 = "/3/device/a\tb" }),
            ("path with DEL", with { $0[2].1 = "/3/device/a\u{7F}" }),
            ("path with UTF-8", with { $0[2].1 = "/3/device/é" }),
            ("method with a space", with { $0[0].1 = "PO ST" }),
            ("pseudo-header last", with { $0.append((":status", "200")) }),
            ("pseudo-header after a field", with { $0.insert(("x-a", "1"), at: 1) }),
            ("status in a request", with { $0.insert((":status", "200"), at: 1) }),
            ("protocol", with { $0.insert((":protocol", "websocket"), at: 1) }),
            ("unknown pseudo-header", with { $0.insert((":foo", "1"), at: 1) }),
            ("duplicate path", with { $0.insert((":path", "/x"), at: 1) }),
            ("bare colon", with { $0.insert((":", "x"), at: 1) }),
            ("upper-case pseudo-header", with { $0[0].0 = ":Method" }),
            ("upper-case name", with { $0.append(("Apns-Id", "1")) }),
            ("empty name", with { $0.append(("", "1")) }),
            ("name with a space", with { $0.append(("apns id", "1")) }),
            ("name with a colon inside", with { $0.append(("apns:id", "1")) }),
            ("name with every tchar", with { $0.append(("!#$%&'*+-.^_`|~09az", "1")) }),
            ("name with a slash", with { $0.append(("a/b", "1")) }),
            ("name with UTF-8", with { $0.append(("é", "1")) }),
            ("connection", with { $0.append(("connection", "close")) }),
            ("transfer-encoding", with { $0.append(("transfer-encoding", "chunked")) }),
            ("proxy-connection", with { $0.append(("proxy-connection", "x")) }),
            ("keep-alive", with { $0.append(("keep-alive", "x")) }),
            ("upgrade", with { $0.append(("upgrade", "h2c")) }),
            ("te: trailers", with { $0.append(("te", "trailers")) }),
            ("te: gzip", with { $0.append(("te", "gzip")) }),
            ("value with NUL", with { $0.append(("x-a", "a\u{0}b")) }),
            ("value with CR", with { $0.append(("x-a", "a\rb")) }),
            ("value with LF", with { $0.append(("x-a", "a\nb")) }),
            ("value with spaces and a tab", with { $0.append(("x-a", " a\tb ")) }),
            ("value with DEL and UTF-8", with { $0.append(("x-a", "\u{7F}é")) }),
            ("empty value", with { $0.append(("x-a", "")) }),
            ("CONNECT", [(":method", "CONNECT"), (":authority", "example.com:443")]),
            ("CONNECT with a path", [(":method", "CONNECT"), (":authority", "example.com:443"), (":path", "/")]),
            ("CONNECT without authority", [(":method", "CONNECT")]),
        ]
        // Every control byte in a regular value and in :path.
        for byte in UInt8(0)...0x1F {
            let character = String(UnicodeScalar(byte))
            cases.append(("value with byte \(byte)", with { $0.append(("x-a", "a\(character)b")) }))
            cases.append(("path with byte \(byte)", with { $0[2].1 = "/a\(character)b" }))
        }
        return cases
    }()

    /// Trailer blocks, after a request as sent.
    static let trailers: [(String, [(String, String)])] = [
        ("a field", [("x-checksum", "1")]),
        ("te: gzip", [("te", "gzip")]),
        ("a pseudo-header", [(":path", "/")]),
        ("status", [(":status", "200")]),
        ("upper-case name", [("X-Checksum", "1")]),
        ("connection", [("connection", "close")]),
        ("value with LF", [("x-a", "a\nb")]),
    ]

    @Test func requestBlocksAreRefusedExactlyWhenNIOHTTP2RefusesThem() throws {
        var refused = 0
        for (label, fields) in Self.requests {
            let headers = HPACKHeaders(fields)
            let nio = try Self.nioRefuses(request: headers, trailers: nil)
            #expect(HTTP2FieldCheck.isMalformed(request: headers) == nio, "\(label)")
            refused += nio ? 1 : 0
        }
        #expect(refused > 40 && refused < Self.requests.count - 10, "both kinds are among the cases")
    }

    @Test func trailersAreRefusedExactlyWhenNIOHTTP2RefusesThem() throws {
        for (label, fields) in Self.trailers {
            let headers = HPACKHeaders(fields)
            let nio = try Self.nioRefuses(request: HPACKHeaders(Self.request), trailers: headers)
            #expect(HTTP2FieldCheck.isMalformed(trailers: headers) == nio, "\(label)")
        }
    }

    /// The emulator's connection, as it is set up (NIOHTTP2's check off, its own on): a malformed request is
    /// reset and never judged or recorded; a well-formed one on the same connection is answered.
    @Test func theEmulatorResetsAMalformedRequestAndAnswersTheNext() throws {
        let log = SandboxDeliveryLog()
        let emulator = try APNsEmulator(log: log)
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .server, headerBlockValidation: .disabled))
        try channel.pipeline.syncOperations.addHandler(APNsEmulatorConnectionHandler(emulator: emulator))
        defer { _ = try? channel.finish() }
        var bytes = try Self.open(channel)
        let request = Self.request.filter { $0.0 != "content-length" }
        var malformed = request
        malformed.append(("connection", "close"))
        Self.appendFrame(type: 1, flags: 0x4, stream: 1, payload: Self.block(HPACKHeaders(malformed)), to: &bytes)
        Self.appendFrame(type: 0, flags: 0x1, stream: 1, payload: ByteBuffer(string: #"{"aps":{}}"#), to: &bytes)
        Self.appendFrame(type: 1, flags: 0x4, stream: 3, payload: Self.block(HPACKHeaders(request)), to: &bytes)
        Self.appendFrame(type: 0, flags: 0x1, stream: 3, payload: ByteBuffer(string: #"{"aps":{}}"#), to: &bytes)
        try channel.writeInbound(bytes)
        let frames = try Self.framesWritten(by: channel)
        #expect(frames.contains { $0.type == 3 && $0.stream == 1 }, "stream 1 is reset")
        #expect(!frames.contains { $0.type == 1 && $0.stream == 1 }, "stream 1 gets no answer")
        #expect(frames.contains { $0.type == 1 && $0.stream == 3 }, "stream 3 is answered")
        #expect(log.all.count == 1, "only stream 3 was judged")
    }

    /// Connects `channel` and returns what a client sends first: the connection preface and an empty
    /// SETTINGS frame.
    static func open(_ channel: EmbeddedChannel) throws -> ByteBuffer {
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        var bytes = ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        Self.appendFrame(type: 4, flags: 0, stream: 0, payload: ByteBuffer(), to: &bytes)
        return bytes
    }

        /// The frames a channel has written: type and stream of each.
    static func framesWritten(by channel: EmbeddedChannel) throws -> [(type: UInt8, stream: UInt32)] {
        var written = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) { written.writeBuffer(&part) }
        var frames: [(type: UInt8, stream: UInt32)] = []
        while written.readableBytes >= 9 {
            let length = Int(written.readInteger(as: UInt16.self)!) << 8 | Int(written.readInteger(as: UInt8.self)!)
            let type = written.readInteger(as: UInt8.self)!
            _ = written.readInteger(as: UInt8.self)
            let stream = written.readInteger(as: UInt32.self)! & 0x7FFF_FFFF
            written.moveReaderIndex(forwardBy: min(length, written.readableBytes))
            frames.append((type, stream))
        }
        return frames
    }

    /// Whether NIOHTTP2's server, with its own header-block check, resets stream 1 on these frames.
    static func nioRefuses(request: HPACKHeaders, trailers: HPACKHeaders?) throws -> Bool {
        let channel = EmbeddedChannel(handler: NIOHTTP2Handler(mode: .server, contentLengthValidation: .disabled))
        defer { _ = try? channel.finish() }
        var bytes = try Self.open(channel)
        Self.appendFrame(type: 1, flags: trailers == nil ? 0x5 : 0x4, stream: 1, payload: Self.block(request), to: &bytes)
        if let trailers {
            Self.appendFrame(type: 1, flags: 0x5, stream: 1, payload: Self.block(trailers), to: &bytes)
        }
        _ = try? channel.writeInbound(bytes)
        // A RST_STREAM (type 3) on stream 1 is its refusal, and so is a GOAWAY (type 7: NIOHPACK's decoder,
        // which the emulator keeps, refuses an empty name for the whole connection).
        return try Self.framesWritten(by: channel).contains { ($0.type == 3 && $0.stream == 1) || $0.type == 7 }
    }

    /// The fields as an HPACK block of literals with new names, byte for byte (NIOHPACK's encoder writes
    /// names in lower case).
    static func block(_ headers: HPACKHeaders) -> ByteBuffer {
        var block = ByteBuffer()
        func string(_ text: String) {
            // A string literal without Huffman coding: its length as an integer with a 7-bit prefix.
            let bytes = Array(text.utf8)
            if bytes.count < 127 {
                block.writeInteger(UInt8(bytes.count))
            } else {
                block.writeInteger(UInt8(127))
                var rest = bytes.count - 127
                while rest >= 128 {
                    block.writeInteger(UInt8(rest & 0x7F | 0x80))
                    rest >>= 7
                }
                block.writeInteger(UInt8(rest))
            }
            block.writeBytes(bytes)
        }
        for (name, value, _) in headers {
            block.writeInteger(UInt8(0))  // literal without indexing, new name
            string(name)
            string(value)
        }
        return block
    }

    static func appendFrame(type: UInt8, flags: UInt8, stream: UInt32, payload: ByteBuffer, to buffer: inout ByteBuffer) {
        var payload = payload
        buffer.writeInteger(UInt16(payload.readableBytes >> 8))
        buffer.writeInteger(UInt8(payload.readableBytes & 0xFF))
        buffer.writeInteger(type)
        buffer.writeInteger(flags)
        buffer.writeInteger(stream)
        buffer.writeBuffer(&payload)
    }
}
