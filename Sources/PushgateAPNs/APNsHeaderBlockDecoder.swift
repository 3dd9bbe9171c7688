import NIOCore

/// Reads the header blocks of APNs answers (HPACK, RFC 7541) for the two fields the client uses, `:status`
/// and `retry-after`, while keeping the dynamic table in step with the server's encoder.
///
/// Every representation is read and every literal the server indexes is entered, with its decoded
/// length, so later blocks' indexes resolve as the server meant them. Only the two fields' values are
/// kept (other values are only counted, Huffman-coded ones without writing them out) and turned into
/// strings. It takes the place of NIOHPACK's decoder, which built a header list of strings
/// for each answer (about 5,000 instructions an answer; callgrind).
struct APNsHeaderBlockDecoder {
    /// What the client reads of one header block.
    struct Fields: Equatable {
        var status: Int?
        var retryAfter: String?
    }

    /// Why a block cannot be read: a COMPRESSION_ERROR for the connection.
    struct Failure: Error, Equatable {
        let reason: String
    }

    private struct Entry {
        let name: [UInt8]
        /// The value when the name is one the client reads; empty otherwise.
        let value: [UInt8]
        let valueLength: Int
        var size: Int { self.name.count + self.valueLength + 32 }
    }

    /// Entries, oldest first; the newest has index 62.
    private var entries: [Entry] = []
    private var entriesStart = 0
    private var size = 0
    /// The table's current capacity, as the encoder last set it.
    private var capacity: Int
    /// The most the encoder may set: the SETTINGS_HEADER_TABLE_SIZE this client announces.
    let maximumCapacity: Int

    init(maximumCapacity: Int = HTTP2Wire.defaultHeaderTableSize) {
        self.maximumCapacity = maximumCapacity
        self.capacity = maximumCapacity
    }

    /// The number of entries in the dynamic table (for tests).
    var entryCount: Int { self.entries.count - self.entriesStart }

    /// Reads one whole header block.
    mutating func decode(_ block: ByteBuffer) throws(Failure) -> Fields {
        do {
            return try block.withUnsafeReadableBytes { bytes in try self.decode(bytes) }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(reason: "\(error)")
        }
    }

    private mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> Fields {
        var fields = Fields()
        var reader = ByteReader(bytes: bytes)
        var fieldSeen = false
        while let first = reader.peek() {
            if first & 0x80 != 0 {
                // Indexed header field (§6.1).
                let index = try reader.integer(prefix: 7)
                let (name, value) = try self.entry(at: index)
                Self.note(name, value, in: &fields)
                fieldSeen = true
            } else if first & 0xE0 == 0x20 {
                // Dynamic table size update (§6.3): only before the block's first field (§4.2).
                guard !fieldSeen else { throw Failure(reason: "a table size update after a header field") }
                let capacity = try reader.integer(prefix: 5)
                guard capacity <= self.maximumCapacity else { throw Failure(reason: "a table size over the announced maximum") }
                self.capacity = capacity
                self.evict(toFit: 0)
            } else {
                // Literal with incremental indexing (§6.2.1), without indexing (§6.2.2), never indexed (§6.2.3).
                let indexed = first & 0xC0 == 0x40
                let index = try reader.integer(prefix: indexed ? 6 : 4)
                let name = index == 0 ? try reader.string(keep: true).bytes : try self.entry(at: index).name
                let value = try reader.string(keep: Self.isRead(name))
                Self.note(name, value.bytes, in: &fields)
                if indexed { self.insert(Entry(name: name, value: value.bytes, valueLength: value.length)) }
                fieldSeen = true
            }
        }
        return fields
    }

    private static let statusName = Array(":status".utf8)
    private static let retryAfterName = Array("retry-after".utf8)

    /// Whether the client reads a field of this name.
    private static func isRead(_ name: [UInt8]) -> Bool {
        name == Self.statusName || name == Self.retryAfterName
    }

    /// Keeps the first `:status` and `retry-after` of a block.
    private static func note(_ name: [UInt8], _ value: [UInt8], in fields: inout Fields) {
        if fields.status == nil, name == Self.statusName {
            // Three digits (RFC 9113 §8.3.2); anything else is no status.
            guard value.count == 3, value.allSatisfy({ (0x30...0x39).contains($0) }) else { return }
            fields.status = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        } else if fields.retryAfter == nil, name == Self.retryAfterName {
            fields.retryAfter = String(decoding: value, as: UTF8.self)
        }
    }

    /// The static or dynamic entry at `index` (§2.3.3).
    private func entry(at index: Int) throws(Failure) -> (name: [UInt8], value: [UInt8]) {
        let staticCount = HPACKStaticTable.entries.count
        if index >= 1, index <= staticCount {
            let entry = HPACKStaticTable.bytes[index - 1]
            return (entry.name, entry.value)
        }
        let dynamic = index - staticCount - 1
        guard index > staticCount, dynamic < self.entryCount else { throw Failure(reason: "header index \(index) out of range") }
        let entry = self.entries[self.entries.count - 1 - dynamic]
        return (entry.name, entry.value)
    }

    /// Adds an entry, evicting the oldest to make room; one larger than the whole table empties it (§4.4).
    private mutating func insert(_ entry: Entry) {
        self.evict(toFit: entry.size)
        guard entry.size <= self.capacity else { return }
        self.entries.append(entry)
        self.size += entry.size
    }

    /// Evicts the oldest entries until `incoming` more bytes fit the capacity.
    private mutating func evict(toFit incoming: Int) {
        while self.size + incoming > self.capacity, self.entriesStart < self.entries.count {
            self.size -= self.entries[self.entriesStart].size
            self.entriesStart += 1
        }
        // Drop the evicted ones from storage now and then, not on every eviction.
        if self.entriesStart > 64, self.entriesStart * 2 > self.entries.count {
            self.entries.removeFirst(self.entriesStart)
            self.entriesStart = 0
        }
    }
}

extension APNsHeaderBlockDecoder {
    /// Reads a header block's bytes front to back.
    private struct ByteReader {
        let bytes: UnsafeRawBufferPointer
        private var index = 0

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        func peek() -> UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

        /// An integer with an `prefix`-bit prefix (§5.1), at most 2^28 (far beyond any length or index
        /// a header block of this client's limit can hold).
        mutating func integer(prefix: Int) throws(Failure) -> Int {
            guard let first = self.peek() else { throw Failure(reason: "a header block cut short") }
            self.index += 1
            let mask = (1 << prefix) - 1
            var value = Int(first) & mask
            guard value == mask else { return value }
            var shift = 0
            while true {
                guard let byte = self.peek() else { throw Failure(reason: "a header block cut short") }
                self.index += 1
                guard shift <= 21 else { throw Failure(reason: "an integer too large") }
                value += Int(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }

        /// A string literal (§5.2), Huffman-decoded when so marked: its decoded length, and its bytes when
        /// `keep`.
        mutating func string(keep: Bool) throws(Failure) -> (length: Int, bytes: [UInt8]) {
            guard let first = self.peek() else { throw Failure(reason: "a header block cut short") }
            let huffman = first & 0x80 != 0
            let length = try self.integer(prefix: 7)
            guard length <= self.bytes.count - self.index else { throw Failure(reason: "a string longer than its block") }
            let slice = UnsafeRawBufferPointer(rebasing: self.bytes[self.index..<self.index + length])
            self.index += length
            guard huffman else { return (length, keep ? Array(slice) : []) }
            do {
                return try HPACKHuffmanCode.decode(slice, keep: keep)
            } catch {
                throw Failure(reason: "a Huffman-coded string that does not decode")
            }
        }
    }
}
