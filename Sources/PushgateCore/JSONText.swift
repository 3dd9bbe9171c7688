/// Writes a ``JSONValue`` as the same compact JSON text as `JSONEncoder` would (sorted keys, unescaped
/// slashes, whole numbers without a fraction), without going through `JSONEncoder`: every delivery encodes
/// its payload, and `Codable` encoding was the largest cost of building a request.
///
/// Values the direct writer does not handle byte for byte like `JSONEncoder` (object keys outside ASCII,
/// numbers with a fraction or beyond ±10¹⁵) are handed to `encodedByFoundation()` whole, so the text is
/// always the same.
public enum JSONText {
    /// The value's compact JSON text.
    /// - Throws: what `JSONEncoder` throws (numbers JSON cannot represent).
    public static func encode(_ value: JSONValue) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        if Self.write(value, into: &output) { return output }
        return try value.encodedByFoundation()
    }

    /// Writes one object whose keys the caller already knows, in the caller's order, without building a
    /// dictionary first: each member as ``encode(_:)`` would write it. For the same text as `encode`, add
    /// the members in sorted key order.
    public struct ObjectWriter {
        private var bytes: [UInt8]
        /// False once a member held something only `JSONEncoder` writes exactly (see ``encode(_:)``); the
        /// caller then encodes the whole object the long way.
        public private(set) var isExact = true
        private var isFirst = true

        /// Starts an object, reserving `capacity` bytes.
        public init(capacity: Int = 512) {
            self.bytes = []
            self.bytes.reserveCapacity(capacity)
            self.bytes.append(UInt8(ascii: "{"))
        }

        /// Appends the member `key` (ASCII) with `value`.
        public mutating func add(_ key: StaticString, _ value: JSONValue) {
            self.addKey(key)
            if !JSONText.write(value, into: &self.bytes) { self.isExact = false }
        }

        /// Appends the member `key` (ASCII) with the string `value`.
        public mutating func add(_ key: StaticString, _ value: String) {
            self.addKey(key)
            JSONText.writeString(value, into: &self.bytes)
        }

        /// Appends the member `key` with the string `value`. A key outside ASCII makes the object inexact
        /// (``isExact``): `JSONEncoder` orders such keys its own way.
        public mutating func add(key: String, _ value: String) {
            self.addKey(key)
            JSONText.writeString(value, into: &self.bytes)
        }

        /// Appends the member `key` with the JSON text that `write` appends, which must be a value as
        /// ``encode(_:)`` writes one (taken as it is), for a value the caller writes without making it first.
        /// A key outside ASCII makes the object inexact (``isExact``).
        public mutating func add(key: String, writingJSONText write: (inout [UInt8]) -> Void) {
            self.addKey(key)
            write(&self.bytes)
        }

        /// Appends the member `key` (ASCII) with the object `object` wrote, as it stands (ended here).
        public mutating func add(_ key: StaticString, _ object: consuming ObjectWriter) {
            self.addKey(key)
            if !object.isExact { self.isExact = false }
            self.bytes.append(contentsOf: object.finish())
        }

        /// Appends the member `key` (ASCII) with `text`, which must be JSON text as ``encode(_:)`` writes
        /// a value (taken as it is).
        public mutating func add(_ key: StaticString, jsonText text: [UInt8]) {
            self.addKey(key)
            self.bytes.append(contentsOf: text)
        }

        /// Ends the object and returns its text.
        public consuming func finish() -> [UInt8] {
            self.bytes.append(UInt8(ascii: "}"))
            return self.bytes
        }

        private mutating func addKey(_ key: String) {
            if !self.isFirst { self.bytes.append(UInt8(ascii: ",")) }
            self.isFirst = false
            if !JSONText.writeString(key, into: &self.bytes, asciiOnly: true) { self.isExact = false }
            self.bytes.append(UInt8(ascii: ":"))
        }

        private mutating func addKey(_ key: StaticString) {
            if !self.isFirst { self.bytes.append(UInt8(ascii: ",")) }
            self.isFirst = false
            self.bytes.append(UInt8(ascii: "\""))
            key.withUTF8Buffer { self.bytes.append(contentsOf: $0) }
            self.bytes.append(contentsOf: "\":".utf8)
        }
    }

    /// The number of bytes ``encode(_:)`` writes for `value`, counted without writing them (a size check
    /// before sending, such as APNs's 4 KiB limit, need not build the text the back end builds again).
    /// - Throws: what ``encode(_:)`` throws.
    public static func encodedCount(_ value: JSONValue) throws -> Int {
        if let count = Self.count(value) { return count }
        return try value.encodedByFoundation().count
    }

    /// What ``write(_:into:)`` would append; nil when it would return false.
    private static func count(_ value: JSONValue) -> Int? {
        switch value {
        case .null: return 4
        case .bool(let flag): return flag ? 4 : 5
        case .number(let number):
            guard number.rounded() == number, abs(number) < 1e15 else { return nil }
            let digits = DecimalDigits.count(Int64(number).magnitude)
            return number < 0 ? digits + 1 : digits
        case .string(let text):
            return Self.countString(text, asciiOnly: false)
        case .array(let elements):
            var total = 2 + max(0, elements.count - 1)
            for element in elements {
                guard let count = Self.count(element) else { return nil }
                total += count
            }
            return total
        case .object(let members):
            var total = 2 + max(0, members.count - 1)
            for (key, member) in members {
                guard let keyCount = Self.countString(key, asciiOnly: true), let count = Self.count(member) else { return nil }
                total += keyCount + 1 + count
            }
            return total
        }
    }

    /// The bytes ``writeString(_:into:asciiOnly:)`` appends for `text`, found as it finds them (runs without
    /// an escape skipped eight bytes a step); nil where it would return false (`asciiOnly` and a byte
    /// outside ASCII).
    private static func countString(_ text: String, asciiOnly: Bool) -> Int? {
        var text = text
        return text.withUTF8 { bytes -> Int? in
            var total = bytes.count + 2
            var index = 0
            var nonASCII: UInt8 = 0
            while true {
                index = JSONStringScanner.plainRunEnd(in: bytes, from: index, stopAtNonASCII: asciiOnly, nonASCII: &nonASCII)
                guard index < bytes.count else { return total }
                let byte = bytes[index]
                if byte >= 0x80 { return nil }
                // What `writeEscape` adds beyond the byte itself: `\x`, or `\u00XX`.
                total += Self.shortEscape(byte) != nil ? 1 : 5
                index += 1
            }
        }
    }

    /// Appends `value`; false when it holds something left to `JSONEncoder`.
    fileprivate static func write(_ value: JSONValue, into output: inout [UInt8]) -> Bool {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let flag):
            output.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .number(let number):
            guard Self.writeNumber(number, into: &output) else { return false }
        case .string(let text):
            Self.writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                guard Self.write(element, into: &output) else { return false }
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            // JSONEncoder sorts keys as Swift orders strings; for ASCII keys that is byte order. A key
            // outside ASCII leaves the whole value to JSONEncoder.
            output.append(UInt8(ascii: "{"))
            func writeMember(_ key: String, _ value: JSONValue) -> Bool {
                guard Self.writeString(key, into: &output, asciiOnly: true) else { return false }
                output.append(UInt8(ascii: ":"))
                return Self.write(value, into: &output)
            }
            if members.count == 1, let member = members.first {
                // One member needs no sorted copy.
                guard writeMember(member.key, member.value) else { return false }
            } else {
                for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                    if index > 0 { output.append(UInt8(ascii: ",")) }
                    guard writeMember(member.key, member.value) else { return false }
                }
            }
            output.append(UInt8(ascii: "}"))
        }
        return true
    }

    /// Appends `number` as an integer when it is a whole number below 10¹⁵ (as JSONValue writes those);
    /// false, with nothing appended, for any other number, which is JSONEncoder's to write.
    static func writeNumber(_ number: Double, into output: inout [UInt8]) -> Bool {
        guard number.rounded() == number, abs(number) < 1e15 else { return false }
        Self.writeInteger(Int64(number), into: &output)
        return true
    }

    private static func writeInteger(_ value: Int64, into output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        DecimalDigits.append(value.magnitude, to: &output)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// A JSON string as JSONEncoder writes it: `"` and `\` escaped, control characters as `\b \t \n \f \r`
    /// or `\u00XX`, everything else (slashes and non-ASCII included) as is.
    /// With `asciiOnly` (object keys), returns false at the first byte outside ASCII, having written part of
    /// the string; otherwise always true.
    @discardableResult
    static func writeString(_ text: String, into output: inout [UInt8], asciiOnly: Bool = false) -> Bool {
        output.append(UInt8(ascii: "\""))
        var text = text
        // Runs of bytes that need no escape (nearly all of them) are copied whole.
        let complete = text.withUTF8 { bytes -> Bool in
            var runStart = 0
            var index = 0
            var nonASCII: UInt8 = 0
            while true {
                index = JSONStringScanner.plainRunEnd(in: bytes, from: index, stopAtNonASCII: asciiOnly, nonASCII: &nonASCII)
                guard index < bytes.count else { break }
                let byte = bytes[index]
                if asciiOnly && byte >= 0x80 { return false }
                if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
                index += 1
                runStart = index
                Self.writeEscape(byte, into: &output)
            }
            if runStart < bytes.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
            return true
        }
        output.append(UInt8(ascii: "\""))
        return complete
    }

    /// The escape of a quote, a backslash or a control character, as `JSONEncoder` writes it.
    private static func writeEscape(_ byte: UInt8, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        if let letter = Self.shortEscape(byte) {
            output.append(letter)
        } else {
            output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            output.append(Self.hexDigits[Int(byte >> 4)])
            output.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }

    /// What follows the backslash where `JSONEncoder` escapes `byte` in two characters (`\"`, `\\`, `\b`,
    /// `\t`, `\n`, `\f`, `\r`); nil for the other control characters, written as `\u00XX`.
    private static func shortEscape(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte
        case 0x08: UInt8(ascii: "b")
        case 0x09: UInt8(ascii: "t")
        case 0x0A: UInt8(ascii: "n")
        case 0x0C: UInt8(ascii: "f")
        case 0x0D: UInt8(ascii: "r")
        default: nil
        }
    }
}
