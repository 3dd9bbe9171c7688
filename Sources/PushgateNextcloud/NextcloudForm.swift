import Foundation
import PushgateCore

/// Reads `application/x-www-form-urlencoded` text as real clients send it to the proxy: `+` is a space,
/// percent escapes are decoded, and later duplicates win.
///
/// It works on the UTF-8 bytes directly: a server's batch is hundreds of kilobytes of escaped JSON, and
/// Foundation's string-level decoding was the largest single cost of reading one.
enum NextcloudForm {
    /// The fields by name; a later duplicate replaces an earlier one.
    static func parse(_ text: Substring) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in Self.pairs(text) { fields[name] = value }
        return fields
    }

    /// Every name and value, in order; a pair with a malformed escape or bytes that are not UTF-8 once
    /// decoded is skipped.
    static func pairs(_ text: Substring) -> [(String, String)] {
        var text = text
        return text.withUTF8 { bytes in
            var pairs: [(String, String)] = []
            var start = 0
            while start <= bytes.count {
                let end = Self.index(of: UInt8(ascii: "&"), in: bytes, from: start)
                if end > start {
                    var separator = start
                    while separator < end, bytes[separator] != UInt8(ascii: "=") { separator += 1 }
                    if let name = Self.decode(bytes, start..<separator), !name.isEmpty,
                        let value = separator < end ? Self.decode(bytes, (separator + 1)..<end) : ""
                    {
                        pairs.append((name, value))
                    }
                }
                start = end + 1
            }
            return pairs
        }
    }

    /// The index of the first `byte` at or after `start`, or `bytes.count`.
    private static func index(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard start < bytes.count, let base = bytes.baseAddress else { return bytes.count }
        guard let found = memchr(base + start, Int32(byte), bytes.count - start) else { return bytes.count }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    /// One name or value, unescaped; nil when an escape is malformed or the result is not UTF-8.
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        guard let base = bytes.baseAddress, !range.isEmpty else { return "" }
        var malformed = false
        // Unescaping only shortens, so the range's length is room enough.
        let output = [UInt8](unsafeUninitializedCapacity: range.count) { output, count in
            guard let target = output.baseAddress else { return }
            var index = range.lowerBound
            var written = 0
            while index < range.upperBound {
                // Eight bytes a step, each word stored whole and counted up to its first `+` or `%`.
                // Unescaping only shortens (`written` never passes `index - range.lowerBound`), so a whole
                // word always fits in the output.
                while index &+ 8 <= range.upperBound {
                    let word = SWARBytes.load(base, at: index)
                    UnsafeMutableRawPointer(target + written).storeBytes(of: word.littleEndian, as: UInt64.self)
                    let stops = SWARBytes.bytes(of: word, equalTo: UInt8(ascii: "+")) | SWARBytes.bytes(of: word, equalTo: UInt8(ascii: "%"))
                    if stops == 0 {
                        index &+= 8
                        written &+= 8
                        continue
                    }
                    let plain = SWARBytes.firstFlaggedOffset(stops)
                    index &+= plain
                    written &+= plain
                    break
                }
                guard index < range.upperBound else { break }
                switch base[index] {
                case UInt8(ascii: "+"):
                    target[written] = UInt8(ascii: " ")
                    index &+= 1
                case UInt8(ascii: "%"):
                    guard index + 2 < range.upperBound, let high = Hex.value(ofDigit: base[index + 1]), let low = Hex.value(ofDigit: base[index + 2]) else {
                        malformed = true
                        count = 0
                        return
                    }
                    target[written] = high << 4 | low
                    index &+= 3
                case let byte:
                    target[written] = byte
                    index &+= 1
                }
                written &+= 1
            }
            count = written
        }
        return malformed ? nil : String(validating: output, as: UTF8.self)
    }
}
