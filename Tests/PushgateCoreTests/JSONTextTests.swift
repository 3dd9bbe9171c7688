import Foundation
import PushgateCore
import PushgateTestSupport
import Testing

@Suite("JSON text")
struct JSONTextTests {
    static let keys = ["a", "B", "a10", "a9", "_x", "Z", "", "aa", "a-b", "a_b", "10", "9", "~", " ", "{", "loc-key", "aps", "é", "ä", "e\u{301}", "😀"]
    static let strings = [
        "", "hello", "a\"b\\c/d", "\u{0}\u{1}\u{8}\u{9}\u{a}\u{b}\u{c}\u{d}\u{1f}\u{7f}", "é\u{2028}\u{2029}😀", "<>&'", "https://example.org/x?y=1",
        "e\u{301}", "line\nbreak",
    ]
    static let numbers: [Double] = [0, -0.0, 1, -1, 2, 42, 1e14, -1e14, 999_999_999_999_999, 1e15, 1e20, 1.5, 0.1, -3.25, 3e-7, 123_456_789_012_345]

    static func randomValue(depth: Int, using generator: inout SystemRandomNumberGenerator) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .number(Self.numbers.randomElement(using: &generator)!)
        case 3: return .string(Self.strings.randomElement(using: &generator)!)
        case 4: return .array((0..<Int.random(in: 0...4, using: &generator)).map { _ in Self.randomValue(depth: depth + 1, using: &generator) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                // Mostly ASCII keys, as payloads have; sometimes others.
                let key = Int.random(in: 0..<10, using: &generator) == 0
                    ? Self.keys.randomElement(using: &generator)!
                    : Self.keys.filter { $0.utf8.allSatisfy { $0 < 0x80 } }.randomElement(using: &generator)!
                members[key] = Self.randomValue(depth: depth + 1, using: &generator)
            }
            return .object(members)
        }
    }

    @Test func writesTheSameBytesAsTheEncoder() async throws {
        // The random values and Foundation's text of them, the bulk of the work, are made off Swift's pool.
        let samples = try await OffPool.run {
            var generator = SystemRandomNumberGenerator()
            return try (0..<3000).map { _ in
                let value = Self.randomValue(depth: 0, using: &generator)
                return (value: value, text: try value.encodedByFoundation())
            }
        }
        for (value, text) in samples {
            #expect(try JSONText.encode(value) == text, "\(value)")
            #expect(try JSONText.encodedCount(value) == text.count, "\(value)")
        }
        let payload: JSONValue = [
            "aps": ["alert": ["loc-key": "MSG_FROM_USER", "loc-args": ["Alice"]], "badge": 2], "room_id": "!r:example.org", "event_id": "$e",
            "counts": ["unread": 2, "missed_calls": 0], "url": "https://example.org/a/b",
        ]
        #expect(try JSONText.encode(payload) == payload.encodedByFoundation())
        #expect(try JSONText.encodedCount(payload) == payload.encodedByFoundation().count)
        #expect(String(decoding: try JSONText.encode(["b": 1, "a": [true, .null, "x/y"]]), as: UTF8.self) == #"{"a":[true,null,"x/y"],"b":1}"#)
    }

    @Test func refusesWhatTheEncoderRefuses() {
        #expect(throws: (any Error).self) { try JSONText.encode(["x": .number(.nan)]) }
        #expect(throws: (any Error).self) { try JSONText.encode([.number(.infinity)]) }
        #expect(throws: (any Error).self) { try JSONText.encodedCount(["x": .number(.nan)]) }
    }

    /// Strings are scanned eight bytes a step: a byte that must be escaped (or, in a key, one outside ASCII)
    /// is found at every offset of a word, in the word-wise part and in the byte-wise tail alike.
    @Test func escapesAByteAtEveryOffset() throws {
        for length in 1...40 {
            for offset in 0..<length {
                for special in ["\"", "\\", "\n", "\u{1}", "\u{1f}", "\u{7f}", "é", "😀", "/", " "] {
                    let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: length - offset - 1)
                    #expect(try JSONText.encode(.string(text)) == JSONValue.string(text).encodedByFoundation(), "\(length) \(offset) \(special)")
                    let object: JSONValue = [text: .null]
                    #expect(try JSONText.encode(object) == object.encodedByFoundation(), "\(length) \(offset) \(special)")
                    // The count finds what the writer finds: the same length, and non-ASCII keys left to Foundation.
                    #expect(try JSONText.encodedCount(.string(text)) == JSONValue.string(text).encodedByFoundation().count, "\(length) \(offset) \(special)")
                    #expect(try JSONText.encodedCount(object) == object.encodedByFoundation().count, "\(length) \(offset) \(special)")
                }
            }
        }
    }
}
