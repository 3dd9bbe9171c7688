extension JSONParser {
    /// Reads the next value and appends the text ``JSONText/encode(_:)`` writes for the value
    /// ``readValue()`` would read (compact, keys sorted, of duplicate keys the last), without building it:
    /// strings without escapes and integers are copied from the text as they stand.
    ///
    /// Returns false where this reader leaves the value to ``readValue()`` and ``JSONText``: an object key
    /// outside ASCII or one that needs an escape, or a number that is not a whole number below 10¹⁵ (what
    /// `JSONEncoder` writes). `output` then holds part of the text, and the caller writes the value the
    /// long way. Either way the parser is past the value, which is held to the same rules as in
    /// ``readValue()``.
    public mutating func readCanonicalText(into output: inout [UInt8]) throws(Failure) -> Bool {
        var members: [CanonicalMember] = []
        return try self.canonicalValue(into: &output, members: &members)
    }

    /// Reads the next value, which must be an object, as ``readCanonicalText(into:)`` does, keeping only
    /// the members whose key `keep` accepts (it sees every key, in the order of the text).
    public mutating func readCanonicalObject(into output: inout [UInt8], keeping keep: (Key) -> Bool) throws(Failure) -> Bool {
        guard self.nextKind == .object else { throw self.failure("expected an object") }
        var members: [CanonicalMember] = []
        // Not kept: the closure is only called while the object is read.
        return try withoutActuallyEscaping(keep) { keep throws(Failure) in
            try self.canonicalObject(into: &output, members: &members, keeping: keep)
        }
    }

    /// One member written to the output: its key (quotes included) at `keyStart..<keyEnd`, then `:` and
    /// its value up to `end`.
    struct CanonicalMember {
        var keyStart: Int
        var keyEnd: Int
        var end: Int
    }

    /// `members` is scratch room shared by the nested objects (each uses the entries it appends and
    /// removes them before it returns).
    private mutating func canonicalValue(into output: inout [UInt8], members: inout [CanonicalMember]) throws(Failure) -> Bool {
        guard self.position < self.bytes.count else { throw self.failure("unexpected end of text") }
        switch self.bytes[self.position] {
        case UInt8(ascii: "{"):
            return try self.canonicalObject(into: &output, members: &members, keeping: nil)
        case UInt8(ascii: "["):
            output.append(UInt8(ascii: "["))
            var exact = true
            var first = true
            try self.readElements { parser throws(Failure) in
                guard exact else { return try parser.skipValue() }
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                exact = try parser.canonicalValue(into: &output, members: &members)
            }
            output.append(UInt8(ascii: "]"))
            return exact
        case UInt8(ascii: "\""):
            try self.canonicalString(into: &output)
            return true
        case UInt8(ascii: "t"):
            try self.literal("true")
            output.append(contentsOf: "true".utf8)
            return true
        case UInt8(ascii: "f"):
            try self.literal("false")
            output.append(contentsOf: "false".utf8)
            return true
        case UInt8(ascii: "n"):
            try self.literal("null")
            output.append(contentsOf: "null".utf8)
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try self.canonicalNumber(into: &output)
        default:
            throw self.failure("unexpected character")
        }
    }

    /// An object: its members written as they come (after a comma but the first), then, unless their keys
    /// already ascend, written again in sorted order with only the last of equal keys.
    private mutating func canonicalObject(
        into output: inout [UInt8], members: inout [CanonicalMember], keeping keep: ((Key) -> Bool)?
    ) throws(Failure) -> Bool {
        let base = members.count
        defer { members.removeSubrange(base...) }
        output.append(UInt8(ascii: "{"))
        let start = output.count
        var exact = true
        try self.readMembers { parser, key throws(Failure) in
            guard exact else { return try parser.skipValue() }
            if let keep, !keep(key) { return try parser.skipValue() }
            if members.count > base { output.append(UInt8(ascii: ",")) }
            let keyStart = output.count
            guard Self.appendPlainKey(key, to: &output) else {
                exact = false
                return try parser.skipValue()
            }
            let keyEnd = output.count
            output.append(UInt8(ascii: ":"))
            exact = try parser.canonicalValue(into: &output, members: &members)
            members.append(CanonicalMember(keyStart: keyStart, keyEnd: keyEnd, end: output.count))
        }
        guard exact else { return false }
        if members.count - base > 1, !Self.keysAscend(members[base...], in: output) {
            Self.rewriteSorted(members[base...], from: start, in: &output)
        }
        output.append(UInt8(ascii: "}"))
        return true
    }

    /// Appends `key` in quotes when it is ASCII and needs no escape; false (nothing appended) otherwise.
    private static func appendPlainKey(_ key: Key, to output: inout [UInt8]) -> Bool {
        guard var decoded = key.decoded else {
            // A key read from the text without escapes, all ASCII: it is its own JSON text.
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: key.raw)
            output.append(UInt8(ascii: "\""))
            return true
        }
        return decoded.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte >= 0x80 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: bytes)
            output.append(UInt8(ascii: "\""))
            return true
        }
    }

    /// Whether each key is greater than the one before (none repeats), as ASCII keys sort.
    private static func keysAscend(_ members: ArraySlice<CanonicalMember>, in output: [UInt8]) -> Bool {
        output.withUnsafeBufferPointer { text in
            var previous: CanonicalMember?
            for member in members {
                if let previous, Self.compareKeys(previous, member, in: text) >= 0 { return false }
                previous = member
            }
            return true
        }
    }

    /// The members from `start` on, written again in key order, keeping the last of equal keys.
    private static func rewriteSorted(_ members: ArraySlice<CanonicalMember>, from start: Int, in output: inout [UInt8]) {
        let written = Array(output[start...])
        output.removeSubrange(start...)
        // Sorted by key, then by position, so the last of equal keys ends each run.
        let order = written.withUnsafeBufferPointer { text in
            members.indices.sorted { left, right in
                let order = Self.compareKeys(members[left], members[right], in: text, shiftedBy: start)
                return order != 0 ? order < 0 : left < right
            }
        }
        var first = true
        written.withUnsafeBufferPointer { text in
            for (index, member) in order.enumerated() {
                if index + 1 < order.count, Self.compareKeys(members[member], members[order[index + 1]], in: text, shiftedBy: start) == 0 { continue }
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                let entry = members[member]
                output.append(contentsOf: UnsafeBufferPointer(rebasing: text[(entry.keyStart - start)..<(entry.end - start)]))
            }
        }
    }

    /// Compares two members' keys byte by byte (quotes left out), a shorter key first when one begins
    /// the other; their offsets are `shift` beyond `text`'s.
    private static func compareKeys(
        _ left: CanonicalMember, _ right: CanonicalMember, in text: UnsafeBufferPointer<UInt8>, shiftedBy shift: Int = 0
    ) -> Int {
        let leftKey = (left.keyStart + 1 - shift)..<(left.keyEnd - 1 - shift)
        let rightKey = (right.keyStart + 1 - shift)..<(right.keyEnd - 1 - shift)
        let common = min(leftKey.count, rightKey.count)
        for offset in 0..<common {
            let a = text[leftKey.lowerBound + offset]
            let b = text[rightKey.lowerBound + offset]
            if a != b { return a < b ? -1 : 1 }
        }
        return leftKey.count - rightKey.count
    }

    /// A string: copied with its quotes when it has no escapes (its bytes are then valid UTF-8 without
    /// control characters, which is how ``JSONText`` writes them), else decoded and written again.
    private mutating func canonicalString(into output: inout [UInt8]) throws(Failure) {
        let start = self.position + 1
        var nonASCII: UInt8 = 0
        let end = JSONStringScanner.plainRunEnd(in: self.bytes, from: start, stopAtNonASCII: false, nonASCII: &nonASCII)
        guard end < self.bytes.count, self.bytes[end] == UInt8(ascii: "\"") else {
            JSONText.writeString(try self.string(), into: &output)
            return
        }
        let content = UnsafeBufferPointer(rebasing: self.bytes[start..<end])
        if nonASCII & 0x80 != 0, !Self.isValidUTF8(content) { throw Failure(offset: start, reason: "invalid UTF-8") }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: self.bytes[(start - 1)...end]))
        self.position = end + 1
    }

    private static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// A number: an integer of up to 15 digits copied (`-0` as `0`, as a `Double` writes it), another
    /// whole number below 10¹⁵ written as an integer; false for the rest, which `JSONEncoder` writes.
    private mutating func canonicalNumber(into output: inout [UInt8]) throws(Failure) -> Bool {
        let start = self.position
        let value = try self.number()
        let digitsStart = self.bytes[start] == UInt8(ascii: "-") ? start + 1 : start
        var isInteger = self.position - digitsStart <= 15
        if isInteger {
            for index in digitsStart..<self.position where !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self.bytes[index]) {
                isInteger = false
                break
            }
        }
        if isInteger {
            if value == 0 {
                output.append(UInt8(ascii: "0"))
            } else {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: self.bytes[start..<self.position]))
            }
            return true
        }
        return JSONText.writeNumber(value, into: &output)
    }
}
