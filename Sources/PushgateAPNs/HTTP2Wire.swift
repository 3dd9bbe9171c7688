import NIOCore

/// The parts of HTTP/2's framing (RFC 9113 §4, §6) that the APNs client reads and writes: frame heads,
/// frame types, flags, settings and error codes.
enum HTTP2Wire {
    /// The client connection preface (RFC 9113 §3.4).
    static let preface: StaticString = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    /// The size of a frame head.
    static let frameHeadSize = 9
    /// Every flow-control window's size until SETTINGS or WINDOW_UPDATE change it.
    static let defaultWindowSize = 65_535
    /// The largest window (2^31 − 1).
    static let maximumWindowSize = Int(Int32.max)
    /// The largest frame payload until the peer's SETTINGS_MAX_FRAME_SIZE says more; also what this client
    /// accepts, as it announces no other.
    static let defaultMaximumFrameSize = 16_384
    /// The HPACK dynamic table's size until the peer's SETTINGS_HEADER_TABLE_SIZE says otherwise.
    static let defaultHeaderTableSize = 4_096

    /// Frame types (RFC 9113 §6).
    enum FrameType: UInt8 {
        case data = 0x0
        case headers = 0x1
        case priority = 0x2
        case rstStream = 0x3
        case settings = 0x4
        case pushPromise = 0x5
        case ping = 0x6
        case goAway = 0x7
        case windowUpdate = 0x8
        case continuation = 0x9
    }

    /// Frame flags; `ack` is SETTINGS' and PING's meaning of the bit `endStream` has on DATA and HEADERS.
    enum Flag {
        static let endStream: UInt8 = 0x1
        static let ack: UInt8 = 0x1
        static let endHeaders: UInt8 = 0x4
        static let padded: UInt8 = 0x8
        static let priority: UInt8 = 0x20
    }

    /// The settings identifiers the client reads or sends (RFC 9113 §6.5.2).
    enum Setting {
        static let headerTableSize: UInt16 = 0x1
        static let enablePush: UInt16 = 0x2
        static let maxConcurrentStreams: UInt16 = 0x3
        static let initialWindowSize: UInt16 = 0x4
        static let maxFrameSize: UInt16 = 0x5
    }

    /// An error code of RST_STREAM and GOAWAY (RFC 9113 §7).
    struct ErrorCode: Equatable, CustomStringConvertible {
        var value: UInt32

        static let noError = ErrorCode(value: 0x0)
        static let protocolError = ErrorCode(value: 0x1)
        static let internalError = ErrorCode(value: 0x2)
        static let flowControlError = ErrorCode(value: 0x3)
        static let frameSizeError = ErrorCode(value: 0x6)
        static let refusedStream = ErrorCode(value: 0x7)
        static let cancel = ErrorCode(value: 0x8)
        static let compressionError = ErrorCode(value: 0x9)

        private static let names = [
            "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
            "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
        ]

        var description: String {
            self.value < Self.names.count ? Self.names[Int(self.value)] : "error code \(self.value)"
        }
    }

    /// The fixed part of a frame.
    struct FrameHead {
        var length: Int
        /// The raw type: frames of unknown types are read and skipped.
        var type: UInt8
        var flags: UInt8
        var streamID: UInt32

        func has(_ flag: UInt8) -> Bool { self.flags & flag != 0 }
    }

    /// The head of the frame at the start of `buffer`, once the whole frame has arrived; nothing is read.
    static func completeFrameHead(in buffer: ByteBuffer) -> FrameHead? {
        guard buffer.readableBytes >= Self.frameHeadSize else { return nil }
        let start = buffer.readerIndex
        guard let lengthHigh = buffer.getInteger(at: start, as: UInt16.self),
            let lengthLow = buffer.getInteger(at: start + 2, as: UInt8.self),
            let type = buffer.getInteger(at: start + 3, as: UInt8.self),
            let flags = buffer.getInteger(at: start + 4, as: UInt8.self),
            let streamID = buffer.getInteger(at: start + 5, as: UInt32.self)
        else { return nil }
        let length = Int(lengthHigh) << 8 | Int(lengthLow)
        let head = FrameHead(length: length, type: type, flags: flags, streamID: streamID & 0x7FFF_FFFF)
        // A frame longer than allowed is reported as soon as its head is here.
        guard length > Self.defaultMaximumFrameSize || buffer.readableBytes >= Self.frameHeadSize + length else { return nil }
        return head
    }
}

extension ByteBuffer {
    /// Writes a frame head.
    mutating func writeHTTP2FrameHead(length: Int, type: HTTP2Wire.FrameType, flags: UInt8 = 0, streamID: UInt32) {
        // One write of nine bytes (each of ByteBuffer's own writes checks and takes exclusive access).
        self.writeWithUnsafeMutableBytes(minimumWritableBytes: HTTP2Wire.frameHeadSize) { bytes in
            bytes[0] = UInt8(truncatingIfNeeded: length >> 16)
            bytes[1] = UInt8(truncatingIfNeeded: length >> 8)
            bytes[2] = UInt8(truncatingIfNeeded: length)
            bytes[3] = type.rawValue
            bytes[4] = flags
            let streamID = streamID & 0x7FFF_FFFF
            bytes[5] = UInt8(truncatingIfNeeded: streamID >> 24)
            bytes[6] = UInt8(truncatingIfNeeded: streamID >> 16)
            bytes[7] = UInt8(truncatingIfNeeded: streamID >> 8)
            bytes[8] = UInt8(truncatingIfNeeded: streamID)
            return HTTP2Wire.frameHeadSize
        }
    }

    /// Writes a SETTINGS frame with `settings` (identifier, value).
    mutating func writeHTTP2Settings(_ settings: [(UInt16, UInt32)], ack: Bool = false) {
        self.writeHTTP2FrameHead(length: settings.count * 6, type: .settings, flags: ack ? HTTP2Wire.Flag.ack : 0, streamID: 0)
        for (identifier, value) in settings {
            self.writeInteger(identifier)
            self.writeInteger(value)
        }
    }

    /// Writes a WINDOW_UPDATE frame.
    mutating func writeHTTP2WindowUpdate(streamID: UInt32, increment: Int) {
        self.writeHTTP2FrameHead(length: 4, type: .windowUpdate, streamID: streamID)
        self.writeInteger(UInt32(increment))
    }

    /// Writes a RST_STREAM frame.
    mutating func writeHTTP2ResetStream(streamID: UInt32, code: HTTP2Wire.ErrorCode) {
        self.writeHTTP2FrameHead(length: 4, type: .rstStream, streamID: streamID)
        self.writeInteger(code.value)
    }

    /// Writes a GOAWAY frame with no debug data.
    mutating func writeHTTP2GoAway(lastStreamID: UInt32, code: HTTP2Wire.ErrorCode) {
        self.writeHTTP2FrameHead(length: 8, type: .goAway, streamID: 0)
        self.writeInteger(lastStreamID)
        self.writeInteger(code.value)
    }
}
