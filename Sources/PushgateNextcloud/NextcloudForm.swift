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
                // The run up to the next `+` or `%` is copied whole.
                let runEnd = Self.plainRunEnd(base, from: index, to: range.upperBound)
                if runEnd > index {
                    (target + written).update(from: base + index, count: runEnd - index)
                    written += runEnd - index
                    index = runEnd
                    if index == range.upperBound { break }
                }
                if base[index] == UInt8(ascii: "+") {
                    target[written] = UInt8(ascii: " ")
                    index += 1
                } else {
                    guard index + 2 < range.upperBound, let high = Self.hexValue(base[index + 1]), let low = Self.hexValue(base[index + 2]) else {
                        malformed = true
                        count = 0
                        return
                    }
                    target[written] = high << 4 | low
                    index += 3
                }
                written += 1
            }
            count = written
        }
        return malformed ? nil : String(validating: output, as: UTF8.self)
    }

    /// The index of the first `+` or `%` in `start..<end`, or `end`; eight bytes a step.
    private static func plainRunEnd(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int {
        var index = start
        while index &+ 8 <= end {
            let word = SWARBytes.load(base, at: index)
            if SWARBytes.bytes(of: word, equalTo: UInt8(ascii: "+")) | SWARBytes.bytes(of: word, equalTo: UInt8(ascii: "%")) != 0 { break }
            index &+= 8
        }
        while index < end, base[index] != UInt8(ascii: "+"), base[index] != UInt8(ascii: "%") { index &+= 1 }
        return index
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
