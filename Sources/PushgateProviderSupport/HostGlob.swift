import PushgateCore

/// A Sygnal-style glob: `*` matches any run of characters, `?` one character; matching is
/// case-insensitive and must cover the whole text.
public struct HostGlob: Sendable, Equatable {
    let pattern: [Character]
    /// The pattern's bytes, lower-cased, when each is a `Character` of its own: then a text of such bytes
    /// is matched byte by byte, with the same result as by `Character` and without making an array of them.
    let asciiPattern: [UInt8]?

    public init(_ pattern: String) {
        let lowered = pattern.lowercased()
        self.pattern = Array(lowered)
        self.asciiPattern = lowered.utf8.allSatisfy(Self.isOneCharacter) ? Array(lowered.utf8) : nil
    }

    /// Whether `byte` is a `Character` by itself in any text: ASCII except CR, which joins a following LF.
    private static func isOneCharacter(_ byte: UInt8) -> Bool {
        byte < 0x80 && byte != UInt8(ascii: "\r")
    }

    /// Whether the glob matches all of `text`.
    public func matches(_ text: String) -> Bool {
        if let asciiPattern = self.asciiPattern, text.utf8.allSatisfy(Self.isOneCharacter) {
            var text = text
            return text.withUTF8 { text in
                asciiPattern.withUnsafeBufferPointer { pattern in
                    // ASCII lower-casing is what `lowercased()` does to these bytes.
                    Self.matches(pattern, text, anyRun: UInt8(ascii: "*"), anyOne: UInt8(ascii: "?")) { $0 == ASCIICaseFolding.folded($1) }
                }
            }
        }
        return Self.matches(self.pattern, Array(text.lowercased()), anyRun: "*", anyOne: "?", ==)
    }

    /// The glob algorithm over any elements: backtracks to the last `anyRun` on a mismatch.
    @inline(__always)
    private static func matches<Pattern: RandomAccessCollection<Element>, Text: RandomAccessCollection<Element>, Element: Equatable>(
        _ pattern: Pattern, _ text: Text, anyRun: Element, anyOne: Element, _ equal: (Element, Element) -> Bool
    ) -> Bool where Pattern.Index == Int, Text.Index == Int {
        var p = 0
        var t = 0
        var star: Int? = nil
        var starText = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == anyOne || equal(pattern[p], text[t]) {
                p += 1
                t += 1
            } else if p < pattern.count, pattern[p] == anyRun {
                star = p
                starText = t
                p += 1
            } else if let star {
                p = star + 1
                starText += 1
                t = starText
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == anyRun { p += 1 }
        return p == pattern.count
    }
}
