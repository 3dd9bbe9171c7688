import NIOCore

/// HPACK (RFC 7541) for the header blocks of APNs requests.
///
/// Values that repeat on every request of a connection (`:authority`, the provider token, the topic, the push
/// type, the priority, the content type) are entered in the dynamic table once and then sent as an index of
/// a byte or two. Values that change with each request (the device token's `:path`, `apns-id`,
/// `apns-expiration`, `apns-collapse-id`, `content-length`) are sent as literals that are not indexed, so they
/// never push out the ones that repeat. Strings are sent as they are, without Huffman coding: it would save
/// about a fifth of their bytes at a cost of several instructions per byte, and HPACK leaves the choice to
/// the encoder (§5.2).
struct APNsHeaderBlockEncoder {
    private struct Entry {
        var name: String
        var value: String
        /// The entry's size as HPACK counts it: both lengths plus 32 (§4.1).
        var size: Int
    }

    /// Entries, newest last; the newest has index 62 (the static table has 61 entries).
    private var entries: [Entry] = []
    private var size = 0
    private var capacity: Int
    /// A capacity to announce at the start of the next block (the peer lowered its table size).
    private var pendingCapacityUpdate: Int?

    /// The static table's index (Appendix A) of a name this encoder sends, if it has one. (The names are
    /// short enough to be stored inline, so each comparison is one of two words, cheaper than hashing.)
    private static func staticIndex(ofName name: String) -> Int? {
        switch name {
        case ":authority": 1
        case ":path": 4
        case "authorization": 23
        case "content-length": 28
        case "content-type": 31
        default: nil
        }
    }

    /// Whether a header's value is worth indexing: the same on every request of a connection.
    private static func repeats(_ name: String) -> Bool {
        switch name {
        case ":authority", "authorization", "apns-topic", "apns-push-type", "apns-priority", "content-type": true
        default: false
        }
    }

    init(capacity: Int = HTTP2Wire.defaultHeaderTableSize) {
        self.capacity = capacity
    }

    /// Follows the peer's SETTINGS_HEADER_TABLE_SIZE (this encoder never uses more than the default 4,096).
    mutating func setPeerTableSize(_ peerSize: Int) {
        let capacity = min(peerSize, HTTP2Wire.defaultHeaderTableSize)
        guard capacity != self.capacity else { return }
        self.capacity = capacity
        self.evict(toFit: 0)
        // The decoder learns of a smaller table from the next block (§4.2, §6.3).
        // Of several changes between two blocks, the smallest is announced, then the last (§4.2).
        self.pendingCapacityUpdate = min(self.pendingCapacityUpdate ?? capacity, capacity)
    }

    /// Appends the header block of one request: the pseudo-headers, `headers`, and `content-length`.
    mutating func encodeRequest(
        path: String, authority: String, headers: [(name: String, value: String)], contentLength: Int,
        into buffer: inout ByteBuffer
    ) {
        let contentLength = String(contentLength)
        // At most: each string with a length of up to 5 bytes, and a representation of up to 6.
        var bound = 32 + path.utf8.count + authority.utf8.count + contentLength.utf8.count
        for header in headers { bound += 22 + header.name.utf8.count + header.value.utf8.count }
        // One write through a pointer: ByteBuffer's own writes check and take exclusive access each time.
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { bytes in
            var writer = RawByteWriter(bytes)
            if let pending = self.pendingCapacityUpdate {
                // A lowered size first, then the current one, when it was raised again in between (§4.2).
                writer.integer(pending, prefix: 5, bits: 0x20)
                if pending != self.capacity { writer.integer(self.capacity, prefix: 5, bits: 0x20) }
                self.pendingCapacityUpdate = nil
            }
            writer.byte(0x80 | 3)  // :method POST
            writer.byte(0x80 | 7)  // :scheme https
            self.encode(name: ":path", value: path, into: &writer)
            self.encode(name: ":authority", value: authority, into: &writer)
            for header in headers {
                self.encode(name: header.name, value: header.value, into: &writer)
            }
            self.encode(name: "content-length", value: contentLength, into: &writer)
            return writer.count
        }
    }

    private mutating func encode(name: String, value: String, into writer: inout RawByteWriter) {
        if Self.repeats(name) {
            if let position = self.entries.lastIndex(where: { $0.name == name && $0.value == value }) {
                writer.integer(62 + (self.entries.count - 1 - position), prefix: 7, bits: 0x80)
                return
            }
            let size = name.utf8.count + value.utf8.count + 32
            if size <= self.capacity {
                // Literal with incremental indexing (§6.2.1).
                Self.writeName(name, prefix: 6, bits: 0x40, into: &writer)
                Self.writeString(value, into: &writer)
                self.evict(toFit: size)
                self.entries.append(Entry(name: name, value: value, size: size))
                self.size += size
                return
            }
        }
        // Literal without indexing (§6.2.2).
        Self.writeName(name, prefix: 4, bits: 0x00, into: &writer)
        Self.writeString(value, into: &writer)
    }

    private mutating func evict(toFit size: Int) {
        var dropped = 0
        while self.size + size > self.capacity, dropped < self.entries.count {
            self.size -= self.entries[dropped].size
            dropped += 1
        }
        if dropped > 0 { self.entries.removeFirst(dropped) }
    }

    private static func writeName(_ name: String, prefix: Int, bits: UInt8, into writer: inout RawByteWriter) {
        if let index = Self.staticIndex(ofName: name) {
            writer.integer(index, prefix: prefix, bits: bits)
        } else {
            writer.byte(bits)
            Self.writeString(name, into: &writer)
        }
    }

    /// A string literal as it is, without Huffman coding (§5.2).
    private static func writeString(_ string: String, into writer: inout RawByteWriter) {
        writer.integer(string.utf8.count, prefix: 7, bits: 0x00)
        writer.bytes(of: string)
    }
}

/// Writes bytes through a pointer into memory known to be large enough.
private struct RawByteWriter {
    private let base: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    init(_ base: UnsafeMutableRawBufferPointer) {
        self.base = base
    }

    mutating func byte(_ byte: UInt8) {
        self.base[self.count] = byte
        self.count += 1
    }

    mutating func bytes(of string: String) {
        let copied = string.utf8.withContiguousStorageIfAvailable { utf8 in
            UnsafeMutableRawBufferPointer(rebasing: self.base[self.count...]).copyMemory(from: UnsafeRawBufferPointer(utf8))
            return utf8.count
        }
        if let copied {
            self.count += copied
        } else {
            for byte in string.utf8 { self.byte(byte) }
        }
    }

    /// An integer with an N-bit prefix (§5.1).
    mutating func integer(_ value: Int, prefix: Int, bits: UInt8) {
        let limit = (1 << prefix) - 1
        if value < limit {
            self.byte(bits | UInt8(value))
            return
        }
        self.byte(bits | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            self.byte(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        self.byte(UInt8(rest))
    }
}
