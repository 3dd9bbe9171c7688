/// Reads JSON text into a ``JSONValue`` directly from its UTF-8 bytes, without `JSONDecoder` (whose
/// `Codable` path tries each case of the enum in turn for every value, the largest cost of reading a
/// request body).
///
/// It accepts exactly RFC 8259 JSON: any value at the top level, surrounded by optional whitespace;
/// strings must be valid UTF-8 without raw control characters, and `\u` escapes must pair their
/// surrogates; numbers must fit a `Double`; nesting is limited to ``maximumDepth``. Of duplicate object
/// keys the last wins, as in Python's `json` (which Sygnal reads requests with).
public struct JSONParser {
    /// Why text is not JSON, with the byte offset where reading stopped.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        /// The offset of the offending byte.
        public let offset: Int
        /// What was wrong there.
        public let reason: String

        public var description: String { "invalid JSON at byte \(self.offset): \(self.reason)" }
    }

    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 512

    /// The text being read; valid for the duration of ``parse(_:)`` only. (Reading through a pointer
    /// instead of the array spares a bounds check and a reference count on every byte.)
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    /// The nesting depth of the container being walked (``readMembers(_:)``, ``readElements(_:)``).
    var depth = 0
    /// Whether invalid UTF-8 and unpaired surrogate escapes in strings become U+FFFD instead of failing.
    let replacesInvalidUnicode: Bool

    private init(_ bytes: UnsafeBufferPointer<UInt8>, replacesInvalidUnicode: Bool = false) {
        self.bytes = bytes
        self.replacesInvalidUnicode = replacesInvalidUnicode
    }

    /// Parses one JSON document.
    public static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        try Self.walk(bytes) { parser throws(Failure) in try parser.readValue() }
    }

    /// Parses one JSON document as Go's `encoding/json` takes one: invalid UTF-8 and unpaired surrogate
    /// escapes (`"\ud83d"`, a text cut inside an emoji) in strings become U+FFFD instead of failing (Go
    /// writes one for each byte of an ill-formed sequence, this one for the sequence). The gorush front
    /// end reads its callers' requests this way, as gorush does.
    public static func parseReplacingInvalidUnicode(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        try Self.walk(bytes, replacingInvalidUnicode: true) { parser throws(Failure) in try parser.readValue() }
    }

    // MARK: Walking a document

    /// What kind of value comes next.
    public enum Kind: Sendable, Equatable {
        case object, array, string, number, bool, null
    }

    /// Reads one JSON document by walking it, for readers that want a few known members without a
    /// dictionary for every object: `body` reads the top-level value with ``readValue()``,
    /// ``readMembers(_:)`` or ``readElements(_:)``, and the text must end after it (whitespace aside).
    /// The text is held to the same rules as ``parse(_:)``.
    public static func walk<T>(
        _ bytes: [UInt8], replacingInvalidUnicode: Bool = false, _ body: (inout JSONParser) throws(Failure) -> T
    ) throws(Failure) -> T {
        // Thrown straight through (typed throws), not carried out in a `Result`: a `Result<T, Failure>` of
        // the caller's `T` had its metadata looked up at run time on every document.
        try bytes.withUnsafeBufferPointer { buffer throws(Failure) -> T in
            var parser = JSONParser(buffer, replacesInvalidUnicode: replacingInvalidUnicode)
            parser.skipWhitespace()
            let value = try body(&parser)
            parser.skipWhitespace()
            guard parser.position == buffer.count else { throw parser.failure("unexpected text after the value") }
            return value
        }
    }

    /// The kind of the next value, or nil at the end of the text or before a byte no value starts with
    /// (reading it then fails).
    public var nextKind: Kind? {
        guard self.position < self.bytes.count else { return nil }
        switch self.bytes[self.position] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: return nil
        }
    }

    /// Reads the next value whole.
    public mutating func readValue() throws(Failure) -> JSONValue {
        try self.value(depth: self.depth)
    }

    /// Reads past the next value, holding it to the same rules as ``readValue()`` without building it.
    public mutating func skipValue() throws(Failure) {
        switch self.nextKind {
        case .object: try self.readMembers { parser, _ throws(Failure) in try parser.skipValue() }
        case .array: try self.readElements { parser throws(Failure) in try parser.skipValue() }
        // A string is read as a key is: its bytes in the text, no `String` made unless it has escapes.
        case .string: _ = try self.key()
        default: _ = try self.value(depth: self.depth)
        }
    }

    /// Reads the next value, which must be an object, handing each member's key to `member` in the
    /// order of the text; `member` must read that member's value with one of the read methods.
    public mutating func readMembers(_ member: (inout JSONParser, Key) throws(Failure) -> Void) throws(Failure) {
        guard self.nextKind == .object else { throw self.failure("expected an object") }
        let outer = self.depth
        self.depth += 1
        try self.walkObject(depth: self.depth, member)
        self.depth = outer
    }

    /// Reads the next value, which must be an array; `element` must read each element with one of the
    /// read methods.
    public mutating func readElements(_ element: (inout JSONParser) throws(Failure) -> Void) throws(Failure) {
        guard self.nextKind == .array else { throw self.failure("expected an array") }
        let outer = self.depth
        self.depth += 1
        try self.walkArray(depth: self.depth, element)
        self.depth = outer
    }

    /// The bytes from `start` up to the current position.
    private func bytes(from start: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: self.bytes[start..<self.position])
    }

    func failure(_ reason: String) -> Failure {
        Failure(offset: self.position, reason: reason)
    }

    mutating func skipWhitespace() {
        while self.position < self.bytes.count {
            switch self.bytes[self.position] {
            case 0x20, 0x09, 0x0A, 0x0D: self.position += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard self.position < self.bytes.count else { throw self.failure("unexpected end of text") }
        switch self.bytes[self.position] {
        case UInt8(ascii: "{"): return try self.object(depth: depth + 1)
        case UInt8(ascii: "["): return try self.array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try self.string())
        case UInt8(ascii: "t"): try self.literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try self.literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try self.literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try self.number())
        default: throw self.failure("unexpected character")
        }
    }

    mutating func literal(_ word: String) throws(Failure) {
        for expected in word.utf8 {
            guard self.position < self.bytes.count else { throw self.failure("unexpected end of text") }
            guard self.bytes[self.position] == expected else { throw self.failure("unexpected character") }
            self.position += 1
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        // Most objects have a few members: start with room for them instead of growing from nothing, from a
        // copy of an empty dictionary that has it (see `makeRoom(for:)`); the copy made by the first
        // insertion is specialised code.
        var members = [String: JSONValue].emptyWithRoom
        try self.walkObject(depth: depth) { parser, key throws(Failure) in members[key.string] = try parser.value(depth: depth) }
        return .object(members)
    }

    /// Reads an object's syntax, handing each key to `member`, which reads the member's value.
    @inline(__always)
    mutating func walkObject(depth: Int, _ member: (inout JSONParser, Key) throws(Failure) -> Void) throws(Failure) {
        guard depth <= Self.maximumDepth else { throw self.failure("nested too deeply") }
        self.position += 1
        self.skipWhitespace()
        if self.position < self.bytes.count, self.bytes[self.position] == UInt8(ascii: "}") {
            self.position += 1
            return
        }
        while true {
            self.skipWhitespace()
            guard self.position < self.bytes.count, self.bytes[self.position] == UInt8(ascii: "\"") else {
                throw self.failure("expected a string key")
            }
            let key = try self.key()
            self.skipWhitespace()
            guard self.position < self.bytes.count, self.bytes[self.position] == UInt8(ascii: ":") else { throw self.failure("expected ':'") }
            self.position += 1
            self.skipWhitespace()
            try member(&self, key)
            self.skipWhitespace()
            guard self.position < self.bytes.count else { throw self.failure("unexpected end of text") }
            switch self.bytes[self.position] {
            case UInt8(ascii: ","): self.position += 1
            case UInt8(ascii: "}"): self.position += 1; return
            default: throw self.failure("expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        var elements: [JSONValue] = []
        try self.walkArray(depth: depth) { parser throws(Failure) in elements.append(try parser.value(depth: depth)) }
        return .array(elements)
    }

    /// Reads an array's syntax; `element` reads each element.
    @inline(__always)
    mutating func walkArray(depth: Int, _ element: (inout JSONParser) throws(Failure) -> Void) throws(Failure) {
        guard depth <= Self.maximumDepth else { throw self.failure("nested too deeply") }
        self.position += 1
        self.skipWhitespace()
        if self.position < self.bytes.count, self.bytes[self.position] == UInt8(ascii: "]") {
            self.position += 1
            return
        }
        while true {
            self.skipWhitespace()
            try element(&self)
            self.skipWhitespace()
            guard self.position < self.bytes.count else { throw self.failure("unexpected end of text") }
            switch self.bytes[self.position] {
            case UInt8(ascii: ","): self.position += 1
            case UInt8(ascii: "]"): self.position += 1; return
            default: throw self.failure("expected ',' or ']'")
            }
        }
    }

    /// Reads a key: where it has no escapes and only ASCII (all but always), the bytes in the text.
    mutating func key() throws(Failure) -> Key {
        let start = self.position + 1
        var nonASCII: UInt8 = 0
        let end = JSONStringScanner.plainRunEnd(in: self.bytes, from: start, stopAtNonASCII: false, nonASCII: &nonASCII)
        if end < self.bytes.count, self.bytes[end] == UInt8(ascii: "\""), nonASCII & 0x80 == 0 {
            self.position = end + 1
            return Key(raw: UnsafeBufferPointer(rebasing: self.bytes[start..<end]))
        }
        return Key(decoded: try self.string())
    }

    mutating func string() throws(Failure) -> String {
        self.position += 1
        let start = self.position
        var nonASCII: UInt8 = 0
        // The common case: no escapes; the bytes are the string.
        self.position = JSONStringScanner.plainRunEnd(in: self.bytes, from: self.position, stopAtNonASCII: false, nonASCII: &nonASCII)
        if self.position < self.bytes.count {
            let byte = self.bytes[self.position]
            if byte == UInt8(ascii: "\"") {
                if nonASCII & 0x80 == 0 {
                    // ASCII is valid UTF-8: no validation pass needed.
                    let text = String(decoding: self.bytes(from: start), as: UTF8.self)
                    self.position += 1
                    return text
                }
                guard let text = String(validating: self.bytes(from: start), as: UTF8.self) else {
                    guard self.replacesInvalidUnicode else { throw Failure(offset: start, reason: "invalid UTF-8") }
                    let text = String(decoding: self.bytes(from: start), as: UTF8.self)
                    self.position += 1
                    return text
                }
                self.position += 1
                return text
            }
            guard byte == UInt8(ascii: "\\") else { throw self.failure("control character in a string") }
        }
        // With escapes: the runs between them are copied whole (`\/` in every base64 text PHP encodes).
        var buffer = Array(self.bytes(from: start))
        buffer.reserveCapacity(buffer.count + 64)
        while self.position < self.bytes.count {
            switch self.bytes[self.position] {
            case UInt8(ascii: "\""):
                // What escapes produce is valid UTF-8, so only raw bytes outside ASCII need validating.
                let text: String?
                if nonASCII & 0x80 == 0 {
                    text = buffer.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
                } else {
                    text = String(validating: buffer, as: UTF8.self)
                }
                guard let text else {
                    guard self.replacesInvalidUnicode else { throw Failure(offset: start, reason: "invalid UTF-8") }
                    self.position += 1
                    return String(decoding: buffer, as: UTF8.self)
                }
                self.position += 1
                return text
            case UInt8(ascii: "\\"):
                self.position += 1
                try self.escape(into: &buffer)
            default:
                let run = self.position
                self.position = JSONStringScanner.plainRunEnd(in: self.bytes, from: self.position, stopAtNonASCII: false, nonASCII: &nonASCII)
                if self.position < self.bytes.count, self.bytes[self.position] < 0x20 {
                    throw self.failure("control character in a string")
                }
                buffer.append(contentsOf: self.bytes(from: run))
            }
        }
        throw self.failure("unterminated string")
    }

    private mutating func escape(into buffer: inout [UInt8]) throws(Failure) {
        guard self.position < self.bytes.count else { throw self.failure("unterminated escape") }
        let byte = self.bytes[self.position]
        self.position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try self.hex4())
            if (0xD800...0xDBFF).contains(scalar) {
                let pairs = self.position + 5 < self.bytes.count && self.bytes[self.position] == UInt8(ascii: "\\")
                    && self.bytes[self.position + 1] == UInt8(ascii: "u")
                if pairs, let low = self.peekHex4(at: self.position + 2), (0xDC00...0xDFFF).contains(low) {
                    self.position += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else {
                    guard self.replacesInvalidUnicode else { throw self.failure("unpaired surrogate") }
                    // Go's reader: the lone half becomes U+FFFD, and what follows is read on its own.
                    scalar = 0xFFFD
                }
            } else if (0xDC00...0xDFFF).contains(scalar) {
                guard self.replacesInvalidUnicode else { throw self.failure("unpaired surrogate") }
                scalar = 0xFFFD
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw self.failure("invalid escape") }
            buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw self.failure("invalid escape")
        }
    }

    /// The four hex digits at `offset` as a number, or nil when they are not four hex digits.
    private func peekHex4(at offset: Int) -> UInt16? {
        guard offset + 4 <= self.bytes.count else { return nil }
        var value: UInt16 = 0
        for index in offset..<(offset + 4) {
            guard let digit = Hex.value(ofDigit: self.bytes[index]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    private mutating func hex4() throws(Failure) -> UInt16 {
        guard self.position + 4 <= self.bytes.count else { throw self.failure("short \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = Hex.value(ofDigit: self.bytes[self.position]) else { throw self.failure("invalid \\u escape") }
            value = value << 4 | UInt16(digit)
            self.position += 1
        }
        return value
    }

    mutating func number() throws(Failure) -> Double {
        let start = self.position
        let negative = self.bytes[self.position] == UInt8(ascii: "-")
        if negative { self.position += 1 }
        guard self.position < self.bytes.count else { throw self.failure("unexpected end of number") }
        let integerStart = self.position
        if self.bytes[self.position] == UInt8(ascii: "0") {
            self.position += 1
        } else {
            guard self.digits() > 0 else { throw self.failure("expected a digit") }
        }
        let integerEnd = self.position
        if self.position < self.bytes.count, self.bytes[self.position] == UInt8(ascii: ".") {
            self.position += 1
            guard self.digits() > 0 else { throw self.failure("expected a digit after '.'") }
        }
        if self.position < self.bytes.count, self.bytes[self.position] | 0x20 == UInt8(ascii: "e") {
            self.position += 1
            if self.position < self.bytes.count, self.bytes[self.position] == UInt8(ascii: "+") || self.bytes[self.position] == UInt8(ascii: "-") {
                self.position += 1
            }
            guard self.digits() > 0 else { throw self.failure("expected a digit in the exponent") }
        }
        // An integer of up to 15 digits (all counts, ids and timestamps) is exact in a Double: no text made.
        if self.position == integerEnd, integerEnd - integerStart <= 15 {
            var magnitude: Int64 = 0
            for index in integerStart..<integerEnd { magnitude = magnitude * 10 + Int64(self.bytes[index] - UInt8(ascii: "0")) }
            return negative ? -Double(magnitude) : Double(magnitude)
        }
        let text = String(decoding: self.bytes(from: start), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw Failure(offset: start, reason: "number out of range") }
        return value
    }

    private mutating func digits() -> Int {
        let start = self.position
        while self.position < self.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self.bytes[self.position]) { self.position += 1 }
        return self.position - start
    }
}
